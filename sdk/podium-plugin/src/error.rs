//! The contract's `error` and what its cases mean to the host.

use crate::http::{Method, method_name};

pub use crate::wit::hardware_driver::podium::plugin::types::{Error, RemoteError};

/// A plugin call's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The longest piece of a response body quoted in an error message, in characters.
pub(crate) const MAX_QUOTE: usize = 300;

/// What the SDK adds to the contract's [`Error`] (in the [`prelude`](crate::prelude)).
pub trait ErrorExt {
    /// The contract's meaning of an HTTP error status of `method url`:
    ///
    /// | status | case |
    /// |---|---|
    /// | 401, 403 | `unauthorized` |
    /// | 404 | `not-found` |
    /// | 400, 415, 422 | `invalid-input` |
    /// | 405, 501 | `unsupported` |
    /// | 409 | `conflict` |
    /// | any other | `remote` with the status (the host retries a 5xx, not a 4xx) |
    ///
    /// The message is `METHOD url: ` and the endpoint's own words: a Redfish (or OData) error
    /// body's `error.message` and `@Message.ExtendedInfo[].Message`, else the status line and the
    /// start of the body, cut to 300 characters.
    fn from_status(method: Method, url: &str, status: u16, body: &[u8]) -> Self;

    /// Whether the host retries an operation that failed with this error: `unreachable`,
    /// `timeout` and a `remote` 5xx are transient, every other case is permanent.
    fn is_transient(&self) -> bool;

    /// The message, whatever the case.
    fn message(&self) -> &str;
}

impl ErrorExt for Error {
    fn from_status(method: Method, url: &str, status: u16, body: &[u8]) -> Error {
        let said = error_body_message(body).unwrap_or_else(|| status_line(status, body));
        let message = format!("{} {url}: {said}", method_name(method));
        match status {
            401 | 403 => Error::Unauthorized(message),
            404 => Error::NotFound(message),
            400 | 415 | 422 => Error::InvalidInput(message),
            405 | 501 => Error::Unsupported(message),
            409 => Error::Conflict(message),
            _ => Error::Remote(RemoteError { status, message }),
        }
    }

    fn is_transient(&self) -> bool {
        match self {
            Error::Unreachable(_) | Error::Timeout(_) => true,
            Error::Remote(r) => r.status >= 500,
            _ => false,
        }
    }

    fn message(&self) -> &str {
        match self {
            Error::Unreachable(m)
            | Error::Timeout(m)
            | Error::Unauthorized(m)
            | Error::NotFound(m)
            | Error::Unsupported(m)
            | Error::InvalidConfig(m)
            | Error::InvalidInput(m)
            | Error::Conflict(m)
            | Error::Protocol(m)
            | Error::Internal(m) => m,
            Error::Remote(r) => &r.message,
        }
    }
}

/// The service's own words from an error body, where it has any.
fn error_body_message(body: &[u8]) -> Option<String> {
    use serde_json::Value;
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

/// At most 300 characters of `text`, marked with `…` where cut.
pub fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTE) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{ErrorExt, MAX_QUOTE};
    use crate::http::Method;
    use crate::{Error, RemoteError};

    fn status(code: u16, body: &str) -> Error {
        Error::from_status(Method::Get, "/redfish/v1/Systems/1", code, body.as_bytes())
    }

    #[test]
    fn statuses_map_to_cases() {
        // What sushy-tools answers to a malformed PATCH.
        let error_body = json!({"error": {
            "code": "Base.1.0.GeneralError",
            "message": "Empty or malformed patch",
            "@Message.ExtendedInfo": [{
                "@odata.type": "/redfish/v1/$metadata#Message.1.0.0.Message",
                "MessageId": "Base.1.0.GeneralError"
            }]
        }})
        .to_string();
        let at = "GET /redfish/v1/Systems/1: Empty or malformed patch";
        assert_eq!(status(401, &error_body), Error::Unauthorized(at.to_owned()));
        assert_eq!(status(403, &error_body), Error::Unauthorized(at.to_owned()));
        assert_eq!(status(404, &error_body), Error::NotFound(at.to_owned()));
        for code in [400, 415, 422] {
            assert_eq!(
                status(code, &error_body),
                Error::InvalidInput(at.to_owned())
            );
        }
        for code in [405, 501] {
            assert_eq!(status(code, &error_body), Error::Unsupported(at.to_owned()));
        }
        assert_eq!(status(409, &error_body), Error::Conflict(at.to_owned()));
        for code in [500, 503, 412, 302] {
            assert_eq!(
                status(code, &error_body),
                Error::Remote(RemoteError {
                    status: code,
                    message: at.to_owned()
                })
            );
        }
    }

    #[test]
    fn extended_info_messages_are_appended() {
        // The shape DMTF's examples and most BMCs use.
        let body = json!({"error": {
            "code": "Base.1.0.GeneralError",
            "message": "A general error has occurred. See ExtendedInfo for more information.",
            "@Message.ExtendedInfo": [
                {"MessageId": "Base.1.8.PropertyValueNotInList",
                 "Message": "The value Usb for the property BootSourceOverrideTarget is not in the list of acceptable values."},
                {"MessageId": "Base.1.8.PropertyMissing"},
                {"MessageId": "Base.1.8.ResourceInUse", "Message": "The change could not be made because the resource is in use."}
            ]
        }});
        assert_eq!(
            status(400, &body.to_string()),
            Error::InvalidInput(
                "GET /redfish/v1/Systems/1: A general error has occurred. See ExtendedInfo for more information.; \
                 The value Usb for the property BootSourceOverrideTarget is not in the list of acceptable values.; \
                 The change could not be made because the resource is in use."
                    .to_owned()
            )
        );
    }

    #[test]
    fn without_a_redfish_body_the_status_line() {
        assert_eq!(
            status(401, ""),
            Error::Unauthorized("GET /redfish/v1/Systems/1: HTTP 401 Unauthorized".to_owned())
        );
        assert_eq!(
            status(503, "<html>\n  <body>busy</body>\n</html>"),
            Error::Remote(RemoteError {
                status: 503,
                message: "GET /redfish/v1/Systems/1: HTTP 503 Service Unavailable: <html> <body>busy</body> </html>"
                    .to_owned()
            })
        );
        assert_eq!(
            status(599, r#"{"error": {}}"#),
            Error::Remote(RemoteError {
                status: 599,
                message: r#"GET /redfish/v1/Systems/1: HTTP 599: {"error": {}}"#.to_owned()
            })
        );
    }

    #[test]
    fn long_bodies_are_cut() {
        let long = "é".repeat(2_000);
        let Error::Remote(RemoteError { message, .. }) = status(500, &long) else {
            panic!("expected remote");
        };
        let quoted = message.split(": ").nth(2).unwrap();
        assert_eq!(quoted.chars().count(), MAX_QUOTE + 1); // and the ellipsis
        assert!(quoted.ends_with('…'));

        let body = json!({"error": {"message": "x".repeat(5_000)}}).to_string();
        let Error::Remote(RemoteError { message, .. }) = status(500, &body) else {
            panic!("expected remote");
        };
        assert!(message.len() < MAX_QUOTE + 100, "{}", message.len());
    }
}
