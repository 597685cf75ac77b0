//! The seam between the Redfish logic and the host: one HTTP call and one log line.
//!
//! In the component, `lib.rs` implements [`Transport`] on the host's `http` and `log` imports; the
//! native tests implement it on canned payloads captured from a real Redfish service. Nothing in
//! here knows about WIT.

/// The HTTP methods this driver uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Method {
    Get,
    Post,
    Patch,
}

impl Method {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Patch => "PATCH",
        }
    }
}

/// What came back: the status and the body (response headers are not needed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
}

/// Why the host could not carry out a request (the host's `http-error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TransportError {
    /// The URL lies outside the endpoint; nothing was sent.
    Denied(String),
    Unreachable(String),
    Timeout(String),
    Tls(String),
    TooLarge(String),
    /// The host found the request malformed (bad header, unparsable URL).
    InvalidRequest(String),
}

/// How loud a log line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Debug,
    Warn,
}

/// Outbound HTTP to the one endpoint the plugin acts for, and the host's log.
///
/// `url` is a path (`/redfish/v1/Systems`) or an absolute URL the service itself linked to; the
/// host resolves it against the endpoint and attaches the credentials.
pub(crate) trait Transport {
    fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Response, TransportError>;

    fn log(&self, level: Level, message: &str);
}
