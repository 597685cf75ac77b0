//! `/v1/ip_pools`: address pools and the addresses claimed from them (admin only).

use podium_types::{IpClaimId, IpPoolId};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::error::{ApiResult, ErrorBody};
use super::extract::{AdminCaller, ApiJson, ApiQuery};
use podium_app::app::Podium;
use podium_types::requests::{IpClaimCreate, IpPoolCreate, IpPoolQuery, IpPoolUpdate, PageParams};
use podium_types::views::{IpClaimView, IpPoolView, List};

#[utoipa::path(post, path = "/v1/ip_pools", tag = "ipam", request_body = IpPoolCreate,
    responses((status = 201, body = IpPoolView), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn ip_pool_create(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiJson(params): ApiJson<IpPoolCreate>,
) -> ApiResult<(StatusCode, Json<IpPoolView>)> {
    let pool = podium.ip_pool_create(&caller, params).await?;
    Ok((StatusCode::CREATED, Json(pool)))
}

#[utoipa::path(get, path = "/v1/ip_pools", tag = "ipam", params(IpPoolQuery),
    responses((status = 200, body = List<IpPoolView>)),
    security(("bearer" = [])))]
pub(super) async fn ip_pool_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiQuery(q): ApiQuery<IpPoolQuery>,
) -> ApiResult<Json<List<IpPoolView>>> {
    let paged = podium
        .ip_pool_list(&caller, q.pod_manager, q.name.as_deref(), q.limit, q.cursor)
        .await?;
    Ok(Json(paged))
}

#[utoipa::path(get, path = "/v1/ip_pools/{id}", tag = "ipam", params(("id" = String, Path)),
    responses((status = 200, body = IpPoolView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn ip_pool_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<IpPoolId>,
) -> ApiResult<Json<IpPoolView>> {
    Ok(Json(podium.ip_pool_view(&caller, &id).await?))
}

#[utoipa::path(patch, path = "/v1/ip_pools/{id}", tag = "ipam", params(("id" = String, Path)),
    request_body = IpPoolUpdate,
    responses((status = 200, body = IpPoolView), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn ip_pool_update(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<IpPoolId>,
    ApiJson(params): ApiJson<IpPoolUpdate>,
) -> ApiResult<Json<IpPoolView>> {
    Ok(Json(podium.ip_pool_update(&caller, &id, params).await?))
}

#[utoipa::path(delete, path = "/v1/ip_pools/{id}", tag = "ipam", params(("id" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn ip_pool_delete(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<IpPoolId>,
) -> ApiResult<StatusCode> {
    podium.ip_pool_delete(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/v1/ip_pools/{id}/claims", tag = "ipam", params(("id" = String, Path)),
    request_body = IpClaimCreate,
    responses((status = 201, body = IpClaimView, description = "A new address"),
        (status = 200, body = IpClaimView, description = "The owner already held this address"),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn ip_claim_create(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<IpPoolId>,
    ApiJson(params): ApiJson<IpClaimCreate>,
) -> ApiResult<(StatusCode, Json<IpClaimView>)> {
    let (claim, created) = podium.ip_claim_create(&caller, &id, params).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(claim)))
}

#[utoipa::path(get, path = "/v1/ip_pools/{id}/claims", tag = "ipam",
    params(("id" = String, Path), PageParams),
    responses((status = 200, body = List<IpClaimView>), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn ip_claim_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<IpPoolId>,
    ApiQuery(q): ApiQuery<PageParams>,
) -> ApiResult<Json<List<IpClaimView>>> {
    let paged = podium
        .ip_claim_list(&caller, &id, q.limit, q.cursor)
        .await?;
    Ok(Json(paged))
}

#[utoipa::path(get, path = "/v1/ip_pools/{id}/claims/{claim}", tag = "ipam",
    params(("id" = String, Path), ("claim" = String, Path)),
    responses((status = 200, body = IpClaimView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn ip_claim_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path((id, claim)): Path<(IpPoolId, IpClaimId)>,
) -> ApiResult<Json<IpClaimView>> {
    Ok(Json(podium.ip_claim_view(&caller, &id, &claim).await?))
}

#[utoipa::path(delete, path = "/v1/ip_pools/{id}/claims/{claim}", tag = "ipam",
    params(("id" = String, Path), ("claim" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn ip_claim_delete(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path((id, claim)): Path<(IpPoolId, IpClaimId)>,
) -> ApiResult<StatusCode> {
    podium.ip_claim_delete(&caller, &id, &claim).await?;
    Ok(StatusCode::NO_CONTENT)
}
