//! Extractors whose rejections come out in the API's own error format: the caller from its
//! bearer token, and JSON bodies whose errors name the field at fault.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use podium_app::app::Podium;
use podium_app::auth::Caller;
use podium_app::error::Error;

/// The caller of a route any token may use, established from its bearer token.
#[derive(Debug)]
pub(super) struct AnyCaller(pub Caller);

impl FromRequestParts<Podium> for AnyCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, podium: &Podium) -> Result<AnyCaller, ApiError> {
        let header = match parts.headers.get(AUTHORIZATION) {
            None => None,
            Some(v) => Some(v.to_str().map_err(|_| {
                Error::Unauthenticated(
                    "malformed credentials: send `Authorization: Bearer <token>`",
                )
            })?),
        };
        Ok(AnyCaller(podium.authenticate(header).await?))
    }
}

/// A JSON body. Not JSON, a wrong type, a missing or an unknown field: a 4xx naming the field.
#[derive(Debug)]
pub(crate) struct ApiJson<T>(pub T);

/// JSON bodies larger than this are refused.
pub(super) const MAX_JSON_BODY: usize = 1 << 20;

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<ApiJson<T>, ApiError> {
        let is_json = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                let mime = v
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase();
                mime == "application/json" || mime.ends_with("+json")
            });
        if !is_json {
            return Err(Error::BadRequest {
                field: None,
                message: "the body must be JSON, sent with `Content-Type: application/json`".into(),
            }
            .into());
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                Error::TooLarge {
                    limit: MAX_JSON_BODY,
                }
            } else {
                Error::BadRequest {
                    field: None,
                    message: format!("cannot read the body: {e}"),
                }
            }
        })?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// Parses JSON, naming the field path of the first error. A string with a NUL character
/// (`\u0000`) anywhere is refused: no datastore can keep it (PostgreSQL refuses it in text) and
/// no field has a use for it.
pub(super) fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // A NUL can only be written as the escape `\u0000`: look for a NUL only where one may be.
    if bytes.windows(6).any(|w| w == br"\u0000")
        && let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes)
        && let Some(field) = nul_in(&value, String::new())
    {
        return Err(nul_error(field).into());
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = match serde_path_to_error::deserialize(&mut de) {
        Ok(v) => v,
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let message = inner.to_string();
            let field = field_of(&path, &message);
            let error = match inner.classify() {
                serde_json::error::Category::Data => Error::Invalid {
                    field,
                    message: reason(&inner),
                },
                _ => Error::BadRequest {
                    field,
                    message: format!("the body is not valid JSON: {}", reason(&inner)),
                },
            };
            return Err(error.into());
        }
    };
    de.end().map_err(|e| Error::BadRequest {
        field: None,
        message: format!("the body is not valid JSON: {}", reason(&e)),
    })?;
    Ok(value)
}

/// serde's account of what is wrong, in words for a person: no line and column of the body (the
/// field is named beside it), and the parser's backquoted lists as plain ones.
fn reason(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let message = match e.line() {
        0 => full.as_str(),
        line => full
            .strip_suffix(&format!(" at line {line} column {}", e.column()))
            .unwrap_or(&full),
    };
    let plain = |list: &str| list.replace('`', "");
    if let Some(rest) = message.strip_prefix("unknown field `") {
        return match rest.split_once("`, expected ") {
            Some((_, expected)) => format!(
                "unknown field: the fields here are {}",
                plain(expected.trim_start_matches("one of ")).replace(" or ", " and ")
            ),
            None => "unknown field: there are no fields here".to_owned(),
        };
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        return match rest.split_once("`, expected ") {
            Some((_, expected)) => format!("is not {}", plain(expected)),
            None => "is not a value this field takes".to_owned(),
        };
    }
    if message.starts_with("missing field `") {
        return "is required".to_owned();
    }
    message.to_owned()
}

/// The path (`auth.password`, `ranges[1].end`) of the first string or key with a NUL in it.
fn nul_in(value: &serde_json::Value, at: String) -> Option<String> {
    use serde_json::Value;
    let join = |key: &str| {
        if at.is_empty() {
            key.to_owned()
        } else {
            format!("{at}.{key}")
        }
    };
    match value {
        Value::String(s) => s.contains('\0').then_some(at),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| nul_in(v, format!("{at}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            if k.contains('\0') {
                Some(join(&k.replace('\0', "\\u0000")))
            } else {
                nul_in(v, join(k))
            }
        }),
        _ => None,
    }
}

fn nul_error(field: String) -> Error {
    Error::Invalid {
        field: Some(field),
        message: "must not contain a NUL character (U+0000)".into(),
    }
}

/// The largest body [`read_small_body`] reads before a request is routed.
const READ_AHEAD_MAX: usize = 64 << 10;

/// Reads a small body (one declaring a length of at most 64 KiB) before the request is routed,
/// so that an answer given without reading it (a 401, a 404, a 405) leaves the connection clean.
/// Otherwise hyper tries one read of a body nobody read, gives up and closes the connection; the
/// rest of the body, arriving after the close, makes the kernel send a reset, which can reach the
/// client before it has read the answer. DMTF's protocol validator met it so about once in
/// twenty runs: its POST to `/redfish/v1/` over TLS failed with no answer where a 405 was sent.
pub(super) async fn read_small_body(
    request: Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let small = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|length| length > 0 && length <= READ_AHEAD_MAX);
    if !small {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    match axum::body::to_bytes(body, READ_AHEAD_MAX).await {
        Ok(bytes) => {
            next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                .await
        }
        Err(e) => ApiError::from(Error::BadRequest {
            field: None,
            message: format!("cannot read the body: {e}"),
        })
        .into_response(),
    }
}

/// Refuses a path or query parameter with a NUL character (`%00`) in it, naming the parameter,
/// before any handler sees it. A route layer: it runs once the route is matched, so it knows the
/// parameter's name from the route's template.
pub(super) async fn refuse_nul_in_url(
    matched: axum::extract::MatchedPath,
    request: Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let uri = request.uri();
    if uri.path().contains("%00") {
        let field = matched
            .as_str()
            .split('/')
            .zip(uri.path().split('/'))
            .find(|(_, segment)| segment.contains("%00"))
            .map(|(template, _)| template.trim_matches(|c| c == '{' || c == '}').to_owned())
            .unwrap_or_else(|| "path".to_owned());
        return ApiError::from(nul_error(field)).into_response();
    }
    if let Some(query) = uri.query()
        && query.contains("%00")
    {
        let field = url::form_urlencoded::parse(query.as_bytes())
            .find(|(k, v)| k.contains('\0') || v.contains('\0'))
            .map(|(k, _)| k.replace('\0', "\\u0000"))
            .unwrap_or_else(|| "query".to_owned());
        return ApiError::from(nul_error(field)).into_response();
    }
    next.run(request).await
}

/// The field a serde error is about: its path, plus the field a "missing field" or "unknown
/// field" message names.
fn field_of(path: &str, message: &str) -> Option<String> {
    // serde_path_to_error writes `?` where it cannot name the place (inside a syntax error).
    let path = path.trim_end_matches("?").trim_end_matches('.');
    let path = (path != "." && !path.is_empty()).then_some(path);
    let named = ["missing field `", "unknown field `"]
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .and_then(|rest| rest.split('`').next());
    match (path, named) {
        (Some(p), Some(n)) if !p.ends_with(n) => Some(format!("{p}.{n}")),
        (Some(p), _) => Some(p.to_owned()),
        (None, Some(n)) => Some(n.to_owned()),
        (None, None) => None,
    }
}

/// Query parameters; an unknown or malformed parameter is a 422 naming it.
#[derive(Debug)]
pub(super) struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<ApiQuery<T>, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        let de = serde_urlencoded::Deserializer::new(url::form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(ApiQuery)
            .map_err(|e| {
                let path = e.path().to_string();
                let message = e.into_inner().to_string();
                Error::Invalid {
                    field: field_of(&path, &message),
                    message: format!("query: {message}"),
                }
                .into()
            })
    }
}

/// The caller of an admin-only route, checked before anything else of the request is read (a
/// tenant learns nothing about the route's body): any admin token for `GET`, a writable one
/// otherwise.
#[derive(Debug)]
pub(super) struct AdminCaller(pub Caller);

impl FromRequestParts<Podium> for AdminCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        podium: &Podium,
    ) -> Result<AdminCaller, ApiError> {
        let AnyCaller(caller) = AnyCaller::from_request_parts(parts, podium).await?;
        if parts.method == axum::http::Method::GET || parts.method == axum::http::Method::HEAD {
            caller.require_admin_read()?;
        } else {
            caller.require_admin()?;
        }
        Ok(AdminCaller(caller))
    }
}

/// The caller of a route tenants may use, refused before the body is read if its token is
/// read-only and the method writes.
#[derive(Debug)]
pub(super) struct WritableCaller(pub Caller);

impl FromRequestParts<Podium> for WritableCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        podium: &Podium,
    ) -> Result<WritableCaller, ApiError> {
        let AnyCaller(caller) = AnyCaller::from_request_parts(parts, podium).await?;
        let read_only = match &caller {
            Caller::Admin { read_only, .. } | Caller::Tenant { read_only, .. } => *read_only,
        };
        if read_only
            && parts.method != axum::http::Method::GET
            && parts.method != axum::http::Method::HEAD
        {
            return Err(Error::Forbidden("this token is read-only".into()).into());
        }
        Ok(WritableCaller(caller))
    }
}

/// The caller of a route only tenants may use (making a claim), checked before the body is read.
#[derive(Debug)]
pub(super) struct TenantCaller(pub Caller);

impl FromRequestParts<Podium> for TenantCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        podium: &Podium,
    ) -> Result<TenantCaller, ApiError> {
        let WritableCaller(caller) = WritableCaller::from_request_parts(parts, podium).await?;
        if matches!(caller, Caller::Admin { .. }) {
            return Err(
                Error::Forbidden("claims are made by tenants: use a tenant token".into()).into(),
            );
        }
        Ok(TenantCaller(caller))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Hints {
        size: Option<u32>,
        serial: Option<String>,
        kind: Option<Kind>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Hdd,
        Ssd,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Image {
        url: String,
        hints: Option<Hints>,
    }

    fn refusal(body: &str) -> (Option<String>, String) {
        match parse_json::<Image>(body.as_bytes()).map_err(|e| e.0) {
            Err(Error::Invalid { field, message } | Error::BadRequest { field, message }) => {
                (field, message)
            }
            other => panic!("{body}: {other:?}"),
        }
    }

    #[test]
    fn a_refusal_names_the_field_and_the_reason_never_a_line_and_column() {
        let padding = " ".repeat(300);
        for (body, field, message) in [
            (
                format!(r#"{{"url": "x",{padding}"hints": {{"rotational": true}}}}"#),
                Some("hints.rotational"),
                "unknown field: the fields here are size, serial, kind",
            ),
            (
                r#"{"url": "x", "hints": {"kind": "tape"}}"#.to_owned(),
                Some("hints.kind"),
                "is not hdd or ssd",
            ),
            (r#"{"hints": null}"#.to_owned(), Some("url"), "is required"),
            (
                r#"{"url": "x", "hints": {"size": "big"}}"#.to_owned(),
                Some("hints.size"),
                "invalid type: string \"big\", expected u32",
            ),
            (
                r#"{"url": "x",
                    "hints": {"size": 1,}}"#
                    .to_owned(),
                Some("hints"),
                "the body is not valid JSON: trailing comma",
            ),
            (
                r#"{"url": "x"} {}"#.to_owned(),
                None,
                "the body is not valid JSON: trailing characters",
            ),
        ] {
            let (f, m) = refusal(&body);
            assert_eq!((f.as_deref(), m.as_str()), (field, message), "{body}");
        }
    }
}
