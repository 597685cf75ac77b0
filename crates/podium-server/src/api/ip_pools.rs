//! `/v1/ip_pools`: address pools and the addresses claimed from them (admin only).

use podium_types::{IpClaimId, IpPoolId, PodManagerId, TenantId};
use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::error::{ApiResult, ErrorBody};
use super::extract::{AdminCaller, ApiJson, ApiQuery};
use super::views::List;
use podium_app::app::Podium;
use podium_app::bindings::PluginBinding;
use podium_app::ipam::{IpClaim, IpPool, Usage};
use podium_types::requests::{
    IpClaimCreate, IpPoolCreate, IpPoolQuery, IpPoolUpdate, IpRangeParams, PageParams,
};

/// An address pool with its usage.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(super) struct IpPoolView {
    id: IpPoolId,
    name: String,
    /// `4` or `6`.
    family: i64,
    /// The subnet every range lies in, from the first range and `prefix`.
    subnet: String,
    prefix: i64,
    gateway: Option<String>,
    dns_servers: Vec<String>,
    ranges: Vec<IpRangeParams>,
    reserved: Vec<String>,
    pre_allocations: BTreeMap<String, String>,
    plugin: PluginBinding,
    pod_manager: Option<PodManagerId>,
    tenants: Vec<TenantId>,
    usage: UsageView,
    created_at: String,
    updated_at: String,
}

/// Address counts. Numbers, possibly beyond 2^53 for IPv6 pools.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(super) struct UsageView {
    /// Addresses the pool can hand out (its ranges minus the gateway and reserved addresses).
    #[schema(value_type = u64)]
    total: u128,
    /// Held by an owner.
    #[schema(value_type = u64)]
    allocated: u128,
    /// Pre-allocated to an owner that has not claimed it yet.
    #[schema(value_type = u64)]
    pre_allocated: u128,
    #[schema(value_type = u64)]
    free: u128,
}

impl From<(IpPool, Usage)> for IpPoolView {
    fn from((p, u): (IpPool, Usage)) -> IpPoolView {
        IpPoolView {
            id: p.row.id,
            name: p.row.name,
            family: p.row.family,
            subnet: p.row.subnet,
            prefix: p.row.prefix,
            gateway: p.row.gateway,
            dns_servers: p.dns_servers,
            ranges: p.ranges,
            reserved: p.reserved,
            pre_allocations: p.pre_allocations,
            plugin: p.plugin,
            pod_manager: p.row.pod_manager,
            tenants: p.tenants,
            usage: UsageView {
                total: u.total,
                allocated: u.allocated,
                pre_allocated: u.pre_allocated,
                free: u.free,
            },
            created_at: p.row.created_at,
            updated_at: p.row.updated_at,
        }
    }
}

/// An address held by an owner.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(super) struct IpClaimView {
    id: IpClaimId,
    pool: IpPoolId,
    owner: String,
    address: String,
    prefix: u8,
    gateway: Option<String>,
    dns_servers: Vec<String>,
    /// The preprovisioning networkData (OpenStack `network_data.json`) for a host owner, from a
    /// plugin that writes one (`ipam-dhcpless`). Shown on create and on view, not in lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    network_data: Option<serde_json::Value>,
    created_at: String,
}

impl From<IpClaim> for IpClaimView {
    fn from(c: IpClaim) -> IpClaimView {
        IpClaimView {
            id: c.row.id,
            pool: c.row.pool_id,
            owner: c.row.owner,
            address: c.row.address,
            prefix: c.prefix,
            gateway: c.gateway,
            dns_servers: c.dns_servers,
            network_data: c.network_data,
            created_at: c.row.created_at,
        }
    }
}

#[utoipa::path(post, path = "/v1/ip_pools", tag = "ipam", request_body = IpPoolCreate,
    responses((status = 201, body = IpPoolView), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn ip_pool_create(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiJson(params): ApiJson<IpPoolCreate>,
) -> ApiResult<(StatusCode, Json<IpPoolView>)> {
    let pool = podium.ip_pool_create(&caller, params).await?;
    let usage = pool.usage(0, 0);
    Ok((StatusCode::CREATED, Json((pool, usage).into())))
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
    Ok(Json(List::from_paged(paged)))
}

#[utoipa::path(get, path = "/v1/ip_pools/{id}", tag = "ipam", params(("id" = String, Path)),
    responses((status = 200, body = IpPoolView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn ip_pool_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<IpPoolId>,
) -> ApiResult<Json<IpPoolView>> {
    Ok(Json(podium.ip_pool_view(&caller, &id).await?.into()))
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
    Ok(Json(
        podium.ip_pool_update(&caller, &id, params).await?.into(),
    ))
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
    Ok((status, Json(claim.into())))
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
    Ok(Json(List::from_paged(paged)))
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
    Ok(Json(
        podium.ip_claim_view(&caller, &id, &claim).await?.into(),
    ))
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
