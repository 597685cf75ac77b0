//! The one place application errors become HTTP: `{"error": {"code", "message", "field"}}` with
//! a stable `code`. Client errors are not logged as errors; a 5xx says little to the caller and
//! everything to the log.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use podium_app::error::{Error, PluginFailure};
use podium_types::ErrorCode;

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
    /// Stable and machine-readable, e.g. `not_found`, `invalid_input`, `pool_exhausted`: one of
    /// the names listed here, each one meaning (`podium_types::ErrorCode`).
    pub code: ErrorCode,
    /// For people.
    pub message: String,
    /// The request field at fault, where there is one (`auth.password`, `ranges[1].end`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl ApiError {
    fn parts(&self) -> (StatusCode, ErrorCode, Option<String>) {
        ApiError::status_of(&self.0)
    }

    /// The status, code and field the API answers an application error with.
    pub(crate) fn status_of(e: &Error) -> (StatusCode, ErrorCode, Option<String>) {
        match e {
            Error::Unauthenticated(_) => {
                (StatusCode::UNAUTHORIZED, ErrorCode::Unauthenticated, None)
            }
            Error::Forbidden(_) => (StatusCode::FORBIDDEN, ErrorCode::Forbidden, None),
            Error::NotFound { .. } => (StatusCode::NOT_FOUND, ErrorCode::NotFound, None),
            Error::BadRequest { field, .. } => (
                StatusCode::BAD_REQUEST,
                ErrorCode::BadRequest,
                field.clone(),
            ),
            Error::Invalid { field, .. } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                ErrorCode::InvalidInput,
                field.clone(),
            ),
            Error::Conflict { code, .. } => (StatusCode::CONFLICT, *code, None),
            Error::ConflictField { code, field, .. } => {
                (StatusCode::CONFLICT, *code, Some(field.clone()))
            }
            Error::InvalidPlugin(_) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                ErrorCode::InvalidPlugin,
                None,
            ),
            Error::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::TooLarge, None),
            Error::Plugin { failure, .. } => plugin_parts(*failure),
            Error::Unavailable(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::Unavailable,
                None,
            ),
            Error::TooManyRequests { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::TooManyRequests,
                None,
            ),
            Error::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::Internal, None),
        }
    }
}

/// The status and code of a failed plugin call.
fn plugin_parts(failure: PluginFailure) -> (StatusCode, ErrorCode, Option<String>) {
    let (status, code) = match failure {
        PluginFailure::InvalidConfig => (
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::InvalidPluginConfig,
        ),
        PluginFailure::InvalidInput => (StatusCode::UNPROCESSABLE_ENTITY, ErrorCode::InvalidInput),
        PluginFailure::Unsupported => (StatusCode::UNPROCESSABLE_ENTITY, ErrorCode::Unsupported),
        PluginFailure::EndpointNotFound => (StatusCode::BAD_GATEWAY, ErrorCode::EndpointNotFound),
        PluginFailure::EndpointConflict => (StatusCode::CONFLICT, ErrorCode::EndpointConflict),
        PluginFailure::EndpointUnauthorized => {
            (StatusCode::BAD_GATEWAY, ErrorCode::EndpointUnauthorized)
        }
        PluginFailure::EndpointUnreachable => {
            (StatusCode::BAD_GATEWAY, ErrorCode::EndpointUnreachable)
        }
        PluginFailure::Deadline => (StatusCode::GATEWAY_TIMEOUT, ErrorCode::PluginDeadline),
        PluginFailure::Busy => (StatusCode::SERVICE_UNAVAILABLE, ErrorCode::PluginsBusy),
        PluginFailure::MemoryLimit => (StatusCode::BAD_GATEWAY, ErrorCode::PluginMemoryLimit),
        PluginFailure::RequestLimit => (StatusCode::BAD_GATEWAY, ErrorCode::PluginRequestLimit),
        PluginFailure::Trapped => (StatusCode::BAD_GATEWAY, ErrorCode::PluginTrapped),
        PluginFailure::MalformedOutput => {
            (StatusCode::BAD_GATEWAY, ErrorCode::PluginMalformedOutput)
        }
        PluginFailure::Failed => (StatusCode::BAD_GATEWAY, ErrorCode::PluginFailed),
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
                code,
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
