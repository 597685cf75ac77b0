//! What a request the host could not carry out means for this driver; an HTTP error status is
//! the SDK's (`ErrorExt::from_status`, part of the contract).

use podium_plugin::http::{HttpError, Method, from_http_error, method_name};
use podium_plugin::{Error, truncate};

/// Who handed the driver the URL of a request, which decides what a host refusal means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UrlSource {
    /// The configuration or a link in a payload of the service.
    Service,
    /// The caller: a system id passed back by the host.
    Caller,
}

/// Maps a request the host could not carry out: a URL outside the endpoint is the caller's bad
/// system id, or the service linking elsewhere; anything else as the SDK maps it.
pub(crate) fn from_transport(
    method: Method,
    url: &str,
    source: UrlSource,
    err: HttpError,
) -> Error {
    match (err, source) {
        (HttpError::Denied(m), UrlSource::Caller) => Error::InvalidInput(format!(
            "system-id {url} lies outside the endpoint: {}",
            truncate(&m)
        )),
        (HttpError::Denied(m), UrlSource::Service) => Error::Protocol(format!(
            "{} {url}: the service linked outside its endpoint: {}",
            method_name(method),
            truncate(&m)
        )),
        (err, _) => from_http_error(method, url, err),
    }
}
