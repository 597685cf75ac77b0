//! The application's error type: transport-agnostic, with a stable machine-readable code. The
//! API layer turns it into HTTP at the very edge (`api/error.rs`).

use podium_runtime::{CallError, LoadError};
use podium_store::StoreError;

/// Everything an application function can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No credentials, or credentials that are malformed, unknown, revoked or expired.
    #[error("{0}")]
    Unauthenticated(&'static str),
    /// Known caller, not allowed.
    #[error("{0}")]
    Forbidden(String),
    /// The resource does not exist, or the caller may not know it does.
    #[error("{kind} `{id}` not found")]
    NotFound { kind: &'static str, id: String },
    /// The request is malformed (not JSON, wrong type); `field` names where.
    #[error("{message}")]
    BadRequest {
        field: Option<String>,
        message: String,
    },
    /// The request is well-formed but a value is not acceptable; `field` names it.
    #[error("{message}")]
    Invalid {
        field: Option<String>,
        message: String,
    },
    /// The request conflicts with what exists; `code` says how.
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    /// The request conflicts with what exists in one field.
    #[error("{message}")]
    ConflictField {
        code: &'static str,
        field: String,
        message: String,
    },
    /// An uploaded plugin cannot be used.
    #[error("{0}")]
    InvalidPlugin(#[source] LoadError),
    /// A plugin call failed.
    #[error("{0}")]
    Plugin(#[source] CallError),
    #[error("request body too large: the limit is {limit} bytes")]
    TooLarge { limit: usize },
    /// The caller holds as much of something as it may (event streams): worth trying again once
    /// it let go of some, after `retry_after_seconds` at the soonest.
    #[error("{message}")]
    TooManyRequests {
        message: String,
        retry_after_seconds: u32,
    },
    /// Overloaded for now (the database took no query in time); worth trying again shortly.
    #[error("{0}")]
    Unavailable(String),
    /// A bug or an outage; details go to the log, not to the caller.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl Error {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Invalid {
            field: Some(field.into()),
            message: message.into(),
        }
    }

    pub fn not_found(kind: &'static str, id: impl std::fmt::Display) -> Error {
        Error::NotFound {
            kind,
            id: id.to_string(),
        }
    }
}

impl Error {
    /// The same error once more, for each of several requests that one failure answers.
    pub fn duplicate(&self) -> Error {
        match self {
            Error::Unauthenticated(m) => Error::Unauthenticated(m),
            Error::Forbidden(m) => Error::Forbidden(m.clone()),
            Error::NotFound { kind, id } => Error::NotFound {
                kind,
                id: id.clone(),
            },
            Error::BadRequest { field, message } => Error::BadRequest {
                field: field.clone(),
                message: message.clone(),
            },
            Error::Invalid { field, message } => Error::Invalid {
                field: field.clone(),
                message: message.clone(),
            },
            Error::Conflict { code, message } => Error::Conflict {
                code,
                message: message.clone(),
            },
            Error::ConflictField {
                code,
                field,
                message,
            } => Error::ConflictField {
                code,
                field: field.clone(),
                message: message.clone(),
            },
            Error::Plugin(e) => Error::Plugin(e.clone()),
            Error::TooLarge { limit } => Error::TooLarge { limit: *limit },
            Error::Unavailable(m) => Error::Unavailable(m.clone()),
            Error::TooManyRequests {
                message,
                retry_after_seconds,
            } => Error::TooManyRequests {
                message: message.clone(),
                retry_after_seconds: *retry_after_seconds,
            },
            Error::InvalidPlugin(_) | Error::Internal(_) => {
                Error::Internal(anyhow::anyhow!("{self:#}"))
            }
        }
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        match e {
            StoreError::Busy(e) => {
                tracing::warn!(error = %e, "the database is busy: a request is refused for now");
                Error::Unavailable(
                    "the database is busy: nothing was changed; try again shortly".to_owned(),
                )
            }
            e => Error::Internal(e.into()),
        }
    }
}
