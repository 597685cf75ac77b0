//! `GET /v1/admin/backup`: a consistent copy of the embedded SQLite database of a running
//! server, streamed (`podium backup FILE` saves it).

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::error::{ApiResult, ErrorBody};
use super::extract::AdminCaller;
use podium_app::app::Podium;

/// A copy of the SQLite database, taken while the server runs (writes go on meanwhile), to
/// restore as `DATA_DIR/podium.db` beside the same secret key (`docs/operations.md`). An admin
/// token (a read-only one will do). On PostgreSQL: 409, back up with `pg_dump`.
#[utoipa::path(get, path = "/v1/admin/backup", tag = "admin",
    responses((status = 200, content_type = "application/vnd.sqlite3", description = "the database file"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn backup(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
) -> ApiResult<Response> {
    let backup = podium.backup(&caller).await?;
    let file = tokio::fs::File::from_std(backup.file);
    let mut response = Body::from_stream(tokio_util::io::ReaderStream::new(file)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/vnd.sqlite3"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(backup.bytes));
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"podium.db\""),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
