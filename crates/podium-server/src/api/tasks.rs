//! `/v1/admin/tasks`: the background tasks of the process that answers (admin only), and a way
//! to run one now.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::error::{ApiResult, ErrorBody};
use super::extract::AdminCaller;
use podium_app::app::Podium;
use podium_types::views::{TaskList, TaskStatus};

/// Lists the background tasks of the process that answers, with when each ran, how long it
/// took, what it did or why it failed, and when it runs next.
#[utoipa::path(get, path = "/v1/admin/tasks", tag = "admin",
    responses((status = 200, body = TaskList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn task_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
) -> ApiResult<Json<TaskList>> {
    Ok(Json(podium.task_list(&caller)?))
}

/// Runs a background task now (`probe`, `sync`, `bind`, `expiry` or `leasing`): at once if it
/// is waiting, right after its current run if it is running. Answers its status as found.
#[utoipa::path(post, path = "/v1/admin/tasks/{name}/run", tag = "admin",
    params(("name" = String, Path)),
    responses((status = 202, body = TaskStatus), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn task_run(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(name): Path<String>,
) -> ApiResult<(StatusCode, Json<TaskStatus>)> {
    Ok((StatusCode::ACCEPTED, Json(podium.task_run(&caller, &name)?)))
}
