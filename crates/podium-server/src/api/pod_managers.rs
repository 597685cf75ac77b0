//! `/v1/pod_managers`: the registry of sites (admin only).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use podium_types::PodManagerId;

use super::error::{ApiResult, ErrorBody};
use super::extract::{AdminCaller, ApiJson, ApiQuery};
use podium_app::app::Podium;
use podium_app::app::page;
use podium_types::PodManagerFilter;
use podium_types::requests::{PodManagerCreate, PodManagerQuery, PodManagerUpdate};
use podium_types::views::{List, OperationView, PodManagerView, StatusChangeView};

/// Lists pod managers, filtered by name, location and status.
#[utoipa::path(get, path = "/v1/pod_managers", tag = "pod_managers", params(PodManagerQuery),
    responses((status = 200, body = List<PodManagerView>), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn pod_manager_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiQuery(q): ApiQuery<PodManagerQuery>,
) -> ApiResult<Json<List<PodManagerView>>> {
    let filter = PodManagerFilter {
        name: q.name,
        location: q.location,
        status: q.status,
    };
    let paged = podium
        .pod_manager_list(&caller, filter, page(q.limit, q.cursor)?)
        .await?;
    Ok(Json(paged))
}

/// Registers a pod manager. It is probed and synced in the background.
#[utoipa::path(post, path = "/v1/pod_managers", tag = "pod_managers", request_body = PodManagerCreate,
    responses((status = 201, body = PodManagerView), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn pod_manager_create(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiJson(params): ApiJson<PodManagerCreate>,
) -> ApiResult<(StatusCode, Json<PodManagerView>)> {
    let pm = podium.pod_manager_create(&caller, params).await?;
    Ok((StatusCode::CREATED, Json(pm)))
}

#[utoipa::path(get, path = "/v1/pod_managers/{uuid}", tag = "pod_managers",
    params(("uuid" = String, Path)),
    responses((status = 200, body = PodManagerView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn pod_manager_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
) -> ApiResult<Json<PodManagerView>> {
    Ok(Json(podium.pod_manager_view(&caller, &uuid).await?))
}

/// Changes a pod manager; validated like a creation. The uuid cannot change.
#[utoipa::path(patch, path = "/v1/pod_managers/{uuid}", tag = "pod_managers",
    params(("uuid" = String, Path)), request_body = PodManagerUpdate,
    responses((status = 200, body = PodManagerView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn pod_manager_update(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
    ApiJson(params): ApiJson<PodManagerUpdate>,
) -> ApiResult<Json<PodManagerView>> {
    Ok(Json(
        podium.pod_manager_update(&caller, &uuid, params).await?,
    ))
}

/// Removes a pod manager and its hosts; refused while any of its hosts is claimed.
#[utoipa::path(delete, path = "/v1/pod_managers/{uuid}", tag = "pod_managers",
    params(("uuid" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn pod_manager_delete(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
) -> ApiResult<StatusCode> {
    podium.pod_manager_delete(&caller, &uuid).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Status changes, newest first.
#[utoipa::path(get, path = "/v1/pod_managers/{uuid}/status_history", tag = "pod_managers",
    params(("uuid" = String, Path)),
    responses((status = 200, body = List<StatusChangeView>), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn pod_manager_status_history(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
) -> ApiResult<Json<List<StatusChangeView>>> {
    Ok(Json(
        podium.pod_manager_status_history(&caller, &uuid).await?,
    ))
}

/// Syncs the inventory now, as an operation.
#[utoipa::path(post, path = "/v1/pod_managers/{uuid}/sync", tag = "pod_managers",
    params(("uuid" = String, Path)),
    responses((status = 202, body = OperationView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn pod_manager_sync(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium.pod_manager_sync(&caller, &uuid).await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}
