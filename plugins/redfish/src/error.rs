//! Turns transport failures and Redfish error responses into the WIT `error` cases.
//!
//! The host decides from the case whether to retry (`unreachable`, `timeout`, `remote` 5xx), so
//! the mapping here is part of the driver's contract. Messages are kept short: the service's own
//! words (`error.message` and the `@Message.ExtendedInfo` texts) or the status line, bodies cut to
//! [`MAX_MESSAGE`] characters, and never a request header.

use serde_json::Value;

use crate::podium::plugin::types::{Error, RemoteError};
use crate::transport::{Method, Response, TransportError};

/// The longest piece of a response body quoted in an error message, in characters.
pub(crate) const MAX_MESSAGE: usize = 300;

/// Who handed the driver the URL of a request, which decides what a host refusal means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UrlSource {
    /// The configuration or a link in a payload of the service.
    Service,
    /// The caller: a system id passed back by the host.
    Caller,
}

/// Maps a request the host could not carry out.
pub(crate) fn from_transport(
    method: Method,
    url: &str,
    source: UrlSource,
    err: TransportError,
) -> Error {
    let at = format!("{} {}", method.as_str(), url);
    match err {
        TransportError::Denied(m) => match source {
            UrlSource::Caller => Error::InvalidInput(format!(
                "system-id {url} lies outside the endpoint: {}",
                truncate(&m)
            )),
            UrlSource::Service => Error::Protocol(format!(
                "{at}: the service linked outside its endpoint: {}",
                truncate(&m)
            )),
        },
        TransportError::Unreachable(m) => Error::Unreachable(format!("{at}: {}", truncate(&m))),
        TransportError::Timeout(m) => Error::Timeout(format!("{at}: {}", truncate(&m))),
        TransportError::Tls(m) => Error::Unreachable(format!("TLS: {at}: {}", truncate(&m))),
        TransportError::TooLarge(m) => {
            Error::Protocol(format!("{at}: too large: {}", truncate(&m)))
        }
        TransportError::InvalidRequest(m) => Error::Internal(format!(
            "{at}: the host refused the request as malformed: {}",
            truncate(&m)
        )),
    }
}

/// Maps a response whose status is not 2xx.
pub(crate) fn from_status(method: Method, url: &str, response: &Response) -> Error {
    let status = response.status;
    let said =
        redfish_message(&response.body).unwrap_or_else(|| status_line(status, &response.body));
    let message = format!("{} {}: {said}", method.as_str(), url);
    match status {
        401 | 403 => Error::Unauthorized(message),
        404 => Error::NotFound(message),
        400 | 415 | 422 => Error::InvalidInput(message),
        405 | 501 => Error::Unsupported(message),
        409 => Error::Conflict(message),
        _ => Error::Remote(RemoteError { status, message }),
    }
}

/// The service's own words from a Redfish error body, where it has any.
fn redfish_message(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let error = value.get("error")?;
    let mut parts: Vec<&str> = Vec::new();
    if let Some(m) = error.get("message").and_then(Value::as_str) {
        parts.push(m);
    }
    if let Some(infos) = error.get("@Message.ExtendedInfo").and_then(Value::as_array) {
        for m in infos
            .iter()
            .filter_map(|i| i.get("Message").and_then(Value::as_str))
        {
            if !parts.contains(&m) {
                parts.push(m);
            }
        }
    }
    let parts: Vec<&str> = parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(truncate(&parts.join("; ")))
}

/// `HTTP 503 Service Unavailable`, followed by the start of a non-JSON body if there is one.
fn status_line(status: u16, body: &[u8]) -> String {
    let line = match reason(status) {
        Some(r) => format!("HTTP {status} {r}"),
        None => format!("HTTP {status}"),
    };
    let text = String::from_utf8_lossy(body);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        line
    } else {
        format!("{line}: {}", truncate(&text))
    }
}

fn reason(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        409 => "Conflict",
        412 => "Precondition Failed",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => return None,
    })
}

/// At most [`MAX_MESSAGE`] characters of `text`, marked with `…` where cut.
pub(crate) fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
