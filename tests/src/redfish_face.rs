//! A client of Podium's own Redfish service, as the tests of it drive it: a request with a
//! token as the Basic password or a session's `X-Auth-Token` (or neither), over the server's TLS
//! where it has it, answered as an [`Answer`].

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::Site;

/// A Redfish answer: status, headers, the JSON body (`Null` when empty) and its text.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Answer {
    pub fn message_id(&self) -> &str {
        self.body["error"]["@Message.ExtendedInfo"][0]["MessageId"]
            .as_str()
            .unwrap_or("")
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// How a request authenticates.
#[derive(Clone, Copy, Debug)]
pub enum Auth<'a> {
    None,
    Basic(&'a str),
    Session(&'a str),
}

pub async fn redfish(
    site: &Site,
    method: Method,
    path: &str,
    auth: Auth<'_>,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Answer {
    let url = format!("{}{path}", site.server.url);
    let mut http = reqwest::Client::builder();
    if let Some(pem) = &site.server.certificate {
        http = http.add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).unwrap());
    }
    let mut request = http.build().unwrap().request(method, url);
    request = match auth {
        Auth::None => request,
        Auth::Basic(token) => request.basic_auth("tenant", Some(token)),
        Auth::Session(token) => request.header("X-Auth-Token", token),
    };
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    if let Some(body) = body {
        request = request
            .header("Content-Type", "application/json")
            .body(body.to_owned());
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer {
        status,
        headers,
        body,
        text,
    }
}

pub async fn get(site: &Site, path: &str, auth: Auth<'_>) -> Answer {
    redfish(site, Method::GET, path, auth, &[], None).await
}

pub async fn post(site: &Site, path: &str, auth: Auth<'_>, body: Value) -> Answer {
    redfish(site, Method::POST, path, auth, &[], Some(&body.to_string())).await
}

pub fn members(answer: &Answer) -> Vec<String> {
    answer.body["Members"]
        .as_array()
        .unwrap_or_else(|| panic!("no Members: {}", answer.text))
        .iter()
        .map(|m| m["@odata.id"].as_str().unwrap().to_owned())
        .collect()
}
