//! The application's error type: transport-agnostic, with a stable machine-readable code. The
//! API layer turns it into HTTP at the very edge (`api/error.rs`).

use podium_runtime::{CallError, LoadError, PluginError};
use podium_types::ErrorCode;

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
    Conflict { code: ErrorCode, message: String },
    /// The request conflicts with what exists in one field.
    #[error("{message}")]
    ConflictField {
        code: ErrorCode,
        field: String,
        message: String,
    },
    /// An uploaded plugin cannot be used.
    #[error("{0}")]
    InvalidPlugin(#[source] LoadError),
    /// A plugin call failed: `failure` says how, in the application's words; `source` is the
    /// runtime's account, for the log and the message.
    #[error("{source}")]
    Plugin {
        failure: PluginFailure,
        #[source]
        source: CallError,
    },
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

/// How a plugin call failed, as the application tells its callers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginFailure {
    /// The plugin refused its configuration.
    InvalidConfig,
    /// The plugin refused what it was given to work on.
    InvalidInput,
    /// The plugin cannot do what was asked (its BMC cannot).
    Unsupported,
    /// The endpoint has no such thing (a system, a slot).
    EndpointNotFound,
    /// The endpoint refused it for its state now.
    EndpointConflict,
    /// The endpoint refused the credentials.
    EndpointUnauthorized,
    /// The endpoint did not answer, or not in time.
    EndpointUnreachable,
    /// The plugin ran past its deadline.
    Deadline,
    /// Every plugin instance of this process was busy for too long: worth trying again.
    Busy,
    /// The plugin grew past its memory limit.
    MemoryLimit,
    /// The plugin sent more to its endpoint than a call may.
    RequestLimit,
    /// The plugin trapped.
    Trapped,
    /// The plugin answered something malformed.
    MalformedOutput,
    /// Anything else: the endpoint's own error, a protocol error, an instance that would not
    /// start.
    Failed,
}

impl PluginFailure {
    fn of(e: &CallError) -> PluginFailure {
        match e {
            CallError::Plugin { error, .. } => match error {
                PluginError::InvalidConfig(_) => PluginFailure::InvalidConfig,
                PluginError::InvalidInput(_) => PluginFailure::InvalidInput,
                PluginError::Unsupported(_) => PluginFailure::Unsupported,
                PluginError::NotFound(_) => PluginFailure::EndpointNotFound,
                PluginError::Conflict(_) => PluginFailure::EndpointConflict,
                PluginError::Unauthorized(_) => PluginFailure::EndpointUnauthorized,
                PluginError::Unreachable(_) | PluginError::Timeout(_) => {
                    PluginFailure::EndpointUnreachable
                }
                PluginError::Remote { .. }
                | PluginError::Protocol(_)
                | PluginError::Internal(_) => PluginFailure::Failed,
            },
            CallError::Deadline { .. } => PluginFailure::Deadline,
            CallError::Busy { .. } => PluginFailure::Busy,
            CallError::MemoryLimit { .. } => PluginFailure::MemoryLimit,
            CallError::HttpBudget { .. } => PluginFailure::RequestLimit,
            CallError::Trap { .. } => PluginFailure::Trapped,
            CallError::Malformed { .. } => PluginFailure::MalformedOutput,
            CallError::WrongWorld { .. } | CallError::Instantiate { .. } => PluginFailure::Failed,
        }
    }
}

impl From<CallError> for Error {
    fn from(source: CallError) -> Error {
        Error::Plugin {
            failure: PluginFailure::of(&source),
            source,
        }
    }
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
                code: *code,
                message: message.clone(),
            },
            Error::ConflictField {
                code,
                field,
                message,
            } => Error::ConflictField {
                code: *code,
                field: field.clone(),
                message: message.clone(),
            },
            Error::Plugin { failure, source } => Error::Plugin {
                failure: *failure,
                source: source.clone(),
            },
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
