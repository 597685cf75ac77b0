//! The one place application errors become HTTP: `{"error": {"code", "message", "field"}}` with
//! a stable `code`. Client errors are not logged as errors; a 5xx says little to the caller and
//! everything to the log.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use podium_app::error::{Error, PluginFailure};

/// An error as the API returns it.
#[derive(Debug)]
pub(crate) struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        ApiError(e)
    }
}

/// The error body.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct ErrorDetail {
    /// Stable and machine-readable, e.g. `not_found`, `invalid_input`, `pool_exhausted`.
    pub code: String,
    /// For people.
    pub message: String,
    /// The request field at fault, where there is one (`auth.password`, `ranges[1].end`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl ApiError {
    fn parts(&self) -> (StatusCode, &'static str, Option<String>) {
        ApiError::status_of(&self.0)
    }

    /// The status, code and field the API answers an application error with.
    pub(crate) fn status_of(e: &Error) -> (StatusCode, &'static str, Option<String>) {
        match e {
            Error::Unauthenticated(_) => (StatusCode::UNAUTHORIZED, "unauthenticated", None),
            Error::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden", None),
            Error::NotFound { .. } => (StatusCode::NOT_FOUND, "not_found", None),
            Error::BadRequest { field, .. } => {
                (StatusCode::BAD_REQUEST, "bad_request", field.clone())
            }
            Error::Invalid { field, .. } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_input",
                field.clone(),
            ),
            Error::Conflict { code, .. } => (StatusCode::CONFLICT, code, None),
            Error::ConflictField { code, field, .. } => {
                (StatusCode::CONFLICT, code, Some(field.clone()))
            }
            Error::InvalidPlugin(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_plugin", None),
            Error::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "too_large", None),
            Error::Plugin { failure, .. } => plugin_parts(*failure),
            Error::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable", None),
            Error::TooManyRequests { .. } => {
                (StatusCode::TOO_MANY_REQUESTS, "too_many_requests", None)
            }
            Error::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal", None),
        }
    }
}

/// The status and code of a failed plugin call.
fn plugin_parts(failure: PluginFailure) -> (StatusCode, &'static str, Option<String>) {
    let (status, code) = match failure {
        PluginFailure::InvalidConfig => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_plugin_config"),
        PluginFailure::InvalidInput => (StatusCode::UNPROCESSABLE_ENTITY, "invalid_input"),
        PluginFailure::Unsupported => (StatusCode::UNPROCESSABLE_ENTITY, "unsupported"),
        PluginFailure::EndpointNotFound => (StatusCode::BAD_GATEWAY, "endpoint_not_found"),
        PluginFailure::EndpointConflict => (StatusCode::CONFLICT, "endpoint_conflict"),
        PluginFailure::EndpointUnauthorized => (StatusCode::BAD_GATEWAY, "endpoint_unauthorized"),
        PluginFailure::EndpointUnreachable => (StatusCode::BAD_GATEWAY, "endpoint_unreachable"),
        PluginFailure::Deadline => (StatusCode::GATEWAY_TIMEOUT, "plugin_deadline"),
        PluginFailure::Busy => (StatusCode::SERVICE_UNAVAILABLE, "plugins_busy"),
        PluginFailure::MemoryLimit => (StatusCode::BAD_GATEWAY, "plugin_memory_limit"),
        PluginFailure::RequestLimit => (StatusCode::BAD_GATEWAY, "plugin_request_limit"),
        PluginFailure::Trapped => (StatusCode::BAD_GATEWAY, "plugin_trapped"),
        PluginFailure::MalformedOutput => (StatusCode::BAD_GATEWAY, "plugin_malformed_output"),
        PluginFailure::Failed => (StatusCode::BAD_GATEWAY, "plugin_failed"),
    };
    (status, code, None)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, field) = self.parts();
        let message = if status.is_server_error() && matches!(self.0, Error::Internal(_)) {
            tracing::error!(error = ?self.0, "internal error");
            "internal error; the server log has the details".to_owned()
        } else {
            if status.is_server_error() {
                tracing::warn!(error = %self.0, "request failed");
            }
            self.0.to_string()
        };
        let body = ErrorBody {
            error: ErrorDetail {
                code: code.to_owned(),
                message,
                field,
            },
        };
        if let Error::TooManyRequests {
            retry_after_seconds,
            ..
        } = self.0
        {
            let retry = [(
                axum::http::header::RETRY_AFTER,
                retry_after_seconds.to_string(),
            )];
            return (status, retry, Json(body)).into_response();
        }
        if status == StatusCode::SERVICE_UNAVAILABLE {
            // Overload that passes (busy plugins, a busy database): when to ask again.
            let retry = [(axum::http::header::RETRY_AFTER, RETRY_AFTER_SECONDS)];
            return (status, retry, Json(body)).into_response();
        }
        (status, Json(body)).into_response()
    }
}

/// What a 503 tells the client to wait before it asks again, in seconds.
const RETRY_AFTER_SECONDS: &str = "1";

/// `Result` of a handler.
pub(super) type ApiResult<T> = Result<T, ApiError>;
