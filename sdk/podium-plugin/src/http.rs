//! Requests to the one endpoint a driver acts for, sent by the host between the steps of a call
//! (`podium:plugin@0.3.0`, as since 0.2.0; see [`exchange`](crate::exchange) for how `.await` becomes a step).
//!
//! The host resolves a path (`/redfish/v1/Systems`) against the endpoint's base URL, refuses any
//! other scheme, host or port (also after redirects), attaches the credentials and applies the
//! site's TLS trust; the plugin never sees a password and may not set `Authorization`, `Host`,
//! `Cookie`, `Proxy-Authorization`, `Connection`, `Transfer-Encoding` or `Content-Length`.
//!
//! Requests awaited together (`futures::future::join_all`, or several futures joined by hand)
//! are sent together.
//!
//! [`Request::send`] answers whatever status came back; [`get_json`], [`send_json`] and
//! [`Request::send_ok`] turn a non-2xx status into the contract's error
//! ([`Error::from_status`]) and a transport failure into its case ([`from_http_error`]).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::truncate;
use crate::{Error, ErrorExt, Result};

pub use crate::wit::hardware_driver::podium::plugin::http::{HttpError, Method, Response};

/// The headers the host sets itself and refuses from a plugin.
pub const HOST_OWNED_HEADERS: [&str; 7] = [
    "authorization",
    "host",
    "cookie",
    "proxy-authorization",
    "connection",
    "transfer-encoding",
    "content-length",
];

/// A request to the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: Method,
    /// A path resolved against the endpoint, or an absolute URL on it.
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn new(method: Method, url: impl Into<String>) -> Request {
        Request {
            method,
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn get(url: impl Into<String>) -> Request {
        Request::new(Method::Get, url)
    }

    pub fn post(url: impl Into<String>) -> Request {
        Request::new(Method::Post, url)
    }

    pub fn patch(url: impl Into<String>) -> Request {
        Request::new(Method::Patch, url)
    }

    pub fn put(url: impl Into<String>) -> Request {
        Request::new(Method::Put, url)
    }

    pub fn delete(url: impl Into<String>) -> Request {
        Request::new(Method::Delete, url)
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Request {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// A JSON body, with `Content-Type: application/json`. Panics (the call traps) where `body`
    /// has no JSON form: a map whose keys are not strings.
    pub fn json<T: Serialize + ?Sized>(mut self, body: &T) -> Request {
        self.body = serde_json::to_vec(body).expect("a value serializes to JSON");
        self.header("Content-Type", "application/json")
    }

    /// Sends the request; any status is an answer.
    pub async fn send(&self) -> std::result::Result<Response, HttpError> {
        crate::exchange::Send::new(self).await
    }

    /// Sends the request; a non-2xx status and a transport failure are the contract's errors.
    pub async fn send_ok(&self) -> Result<Response> {
        let response = self
            .send()
            .await
            .map_err(|e| from_http_error(self.method, &self.url, e))?;
        if !(200..300).contains(&response.status) {
            return Err(Error::from_status(
                self.method,
                &self.url,
                response.status,
                &response.body,
            ));
        }
        Ok(response)
    }
}

/// `GET url` (with `Accept: application/json`) into `T`; a body that is not a `T` is
/// `protocol`, naming the field.
pub async fn get_json<T: DeserializeOwned>(url: &str) -> Result<T> {
    let response = Request::get(url)
        .header("Accept", "application/json")
        .send_ok()
        .await?;
    parse_json(Method::Get, url, &response.body)
}

/// `method url` with a JSON body; the response's body is handed back as it came (often empty).
pub async fn send_json<B: Serialize + ?Sized>(
    method: Method,
    url: &str,
    body: &B,
) -> Result<Response> {
    Request::new(method, url)
        .header("Accept", "application/json")
        .json(body)
        .send_ok()
        .await
}

/// `body` as a `T`, or a `protocol` error that names the field and the request.
pub fn parse_json<T: DeserializeOwned>(method: Method, url: &str, body: &[u8]) -> Result<T> {
    let mut de = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let at = format!("{} {url}", method_name(method));
        Error::Protocol(if path == "." || inner.is_syntax() || inner.is_eof() {
            format!("{at}: the response is not the JSON expected: {inner}")
        } else {
            format!("{at}: {path}: {inner}")
        })
    })
}

/// How many pages of one collection [`collection_members`] follows before it calls the service
/// broken.
pub const MAX_PAGES: usize = 10_000;

/// The members of a Redfish collection at `url` (`Members[].@odata.id`), every page of it:
/// `Members@odata.nextLink` is followed (a path or an absolute URL on the endpoint), at most
/// [`MAX_PAGES`] pages, and a link back to a page already read is `protocol`, as are a page with
/// no `Members` list and a member with no `@odata.id`.
pub async fn collection_members(url: &str) -> Result<Vec<String>> {
    // Kept as the list in the call's state, not as its pages.
    crate::exchange::memo(format!("members:{url}"), collection_pages(url)).await
}

async fn collection_pages(url: &str) -> Result<Vec<String>> {
    let mut members = Vec::new();
    let mut pages = std::collections::BTreeSet::new();
    let mut next = Some(url.to_owned());
    while let Some(page_url) = next.take() {
        if !pages.insert(page_url.clone()) {
            return Err(Error::Protocol(format!(
                "GET {url}: Members@odata.nextLink leads back to {page_url}"
            )));
        }
        if pages.len() > MAX_PAGES {
            return Err(Error::Protocol(format!(
                "GET {url}: more than {MAX_PAGES} pages"
            )));
        }
        let page: Value = get_json(&page_url).await?;
        let Some(list) = page.get("Members").and_then(Value::as_array) else {
            return Err(Error::Protocol(format!("GET {page_url}: no Members list")));
        };
        for (i, member) in list.iter().enumerate() {
            let Some(member) = member.as_object() else {
                return Err(Error::Protocol(format!(
                    "GET {page_url}: Members[{i}] is not an object"
                )));
            };
            let Some(id) = member
                .get("@odata.id")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|p| !p.is_empty())
            else {
                return Err(Error::Protocol(format!(
                    "GET {page_url}: Members[{i}] has no @odata.id"
                )));
            };
            members.push(id.to_owned());
        }
        next = page
            .get("Members@odata.nextLink")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned);
    }
    Ok(members)
}

/// The contract's error for a request the host could not carry out:
/// `unreachable` (also a failed TLS handshake) and `timeout` are transient; a request outside the
/// endpoint or past the call's budget (`denied`) is `protocol`; a body over the host's limit is
/// `protocol`; a request the host found malformed is `internal` (a bug in the plugin).
pub fn from_http_error(method: Method, url: &str, error: HttpError) -> Error {
    let at = format!("{} {url}", method_name(method));
    match error {
        HttpError::Denied(m) => {
            Error::Protocol(format!("{at}: refused by the host: {}", truncate(&m)))
        }
        HttpError::Unreachable(m) => Error::Unreachable(format!("{at}: {}", truncate(&m))),
        HttpError::Timeout(m) => Error::Timeout(format!("{at}: {}", truncate(&m))),
        HttpError::Tls(m) => Error::Unreachable(format!("TLS: {at}: {}", truncate(&m))),
        HttpError::TooLarge(m) => Error::Protocol(format!("{at}: too large: {}", truncate(&m))),
        HttpError::InvalidRequest(m) => Error::Internal(format!(
            "{at}: the host refused the request as malformed: {}",
            truncate(&m)
        )),
    }
}

/// `GET`, `POST`, ...: the method as HTTP spells it.
pub fn method_name(method: Method) -> &'static str {
    match method {
        Method::Get => "GET",
        Method::Head => "HEAD",
        Method::Post => "POST",
        Method::Put => "PUT",
        Method::Patch => "PATCH",
        Method::Delete => "DELETE",
    }
}
