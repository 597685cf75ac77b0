//! `/v1/grants`: which tenant may claim hosts of which pod manager (admin only); and
//! `/v1/me/pod_managers`: those a tenant was granted, as it sees them.

use podium_types::{GrantId, PodManagerId};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::error::{ApiResult, ErrorBody};
use super::extract::{AdminCaller, AnyCaller, ApiJson, ApiQuery};
use podium_app::app::Podium;
use podium_types::requests::{GrantCreate, GrantQuery, GrantedPodManagerQuery};
use podium_types::views::{GrantView, GrantedPodManagerView, List};

#[utoipa::path(post, path = "/v1/grants", tag = "grants", request_body = GrantCreate,
    responses((status = 201, body = GrantView), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn grant_create(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiJson(params): ApiJson<GrantCreate>,
) -> ApiResult<(StatusCode, Json<GrantView>)> {
    let grant = podium.grant_create(&caller, params).await?;
    Ok((StatusCode::CREATED, Json(grant)))
}

#[utoipa::path(get, path = "/v1/grants", tag = "grants", params(GrantQuery),
    responses((status = 200, body = List<GrantView>)),
    security(("bearer" = [])))]
pub(super) async fn grant_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiQuery(q): ApiQuery<GrantQuery>,
) -> ApiResult<Json<List<GrantView>>> {
    let paged = podium
        .grant_list(&caller, q.tenant, q.pod_manager, q.limit, q.cursor)
        .await?;
    Ok(Json(paged))
}

#[utoipa::path(get, path = "/v1/grants/{id}", tag = "grants", params(("id" = String, Path)),
    responses((status = 200, body = GrantView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn grant_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<GrantId>,
) -> ApiResult<Json<GrantView>> {
    Ok(Json(podium.grant_view(&caller, &id).await?))
}

#[utoipa::path(delete, path = "/v1/grants/{id}", tag = "grants", params(("id" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn grant_delete(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<GrantId>,
) -> ApiResult<StatusCode> {
    podium.grant_delete(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The pod managers the caller's tenant may claim hosts of, each with what its grant allows
/// (a label selector, a number of hosts); never their URLs or credentials. Tenants only.
#[utoipa::path(get, path = "/v1/me/pod_managers", tag = "grants", params(GrantedPodManagerQuery),
    responses((status = 200, body = List<GrantedPodManagerView>)),
    security(("bearer" = [])))]
pub(super) async fn granted_pod_manager_list(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    ApiQuery(q): ApiQuery<GrantedPodManagerQuery>,
) -> ApiResult<Json<List<GrantedPodManagerView>>> {
    Ok(Json(podium.granted_pod_manager_list(&caller, q).await?))
}

/// One pod manager the caller's tenant was granted; any other is not found. Tenants only.
#[utoipa::path(get, path = "/v1/me/pod_managers/{uuid}", tag = "grants",
    params(("uuid" = String, Path)),
    responses((status = 200, body = GrantedPodManagerView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn granted_pod_manager_view(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    Path(uuid): Path<PodManagerId>,
) -> ApiResult<Json<GrantedPodManagerView>> {
    Ok(Json(podium.granted_pod_manager_view(&caller, &uuid).await?))
}
