//! `/v1/claims`: a tenant's claims on hosts (a tenant sees its own; an admin sees all).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use podium_types::{ClaimId, HostId, PodManagerId, TenantId};

use super::error::{ApiResult, ErrorBody};
use super::extract::{AnyCaller, ApiJson, TenantCaller, WritableCaller};
use super::views::List;
use podium_app::app::Podium;
use podium_app::ipam::IpClaim;
use podium_store::{ClaimRow, HostRow};
use podium_types::requests::{ClaimCreate, ClaimUpdate};

/// The consumer's view of its host: hardware data, power and provisioning state. Never the BMC,
/// its credentials, the pod manager's URL or the driver's system id.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(super) struct ClaimedHostView {
    id: HostId,
    name: String,
    uuid: Option<String>,
    manufacturer: Option<String>,
    model: Option<String>,
    cpu_count: i64,
    memory_mib: i64,
    /// `[{"name", "mac", "speed_mbps"}]`.
    #[schema(value_type = Vec<Object>)]
    nics: serde_json::Value,
    power_state: String,
    provisioning_state: String,
    /// Addresses IPAM holds for the claim and its host.
    addresses: Vec<AddressView>,
}

/// An address the claim's host has.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(super) struct AddressView {
    address: String,
    prefix: u8,
    gateway: Option<String>,
    dns_servers: Vec<String>,
}

/// A claim.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(super) struct ClaimView {
    id: ClaimId,
    /// `pending`, `bound`, `releasing` or `failed`.
    state: String,
    /// Why it waits or failed.
    reason: Option<String>,
    tenant: TenantId,
    pod_manager: PodManagerId,
    selector: std::collections::BTreeMap<String, String>,
    min_cpu: i64,
    min_memory_mib: i64,
    #[schema(value_type = Object)]
    image: serde_json::Value,
    online: bool,
    has_user_data: bool,
    host: Option<ClaimedHostView>,
    created_at: String,
    updated_at: String,
}

/// The view of a claim with the addresses its host has.
async fn full_view(podium: &Podium, pair: (ClaimRow, Option<HostRow>)) -> ApiResult<ClaimView> {
    let addresses = podium.claim_addresses(&pair.0, pair.1.as_ref()).await?;
    Ok(view(pair, addresses))
}

fn view((c, h): (ClaimRow, Option<HostRow>), addresses: Vec<IpClaim>) -> ClaimView {
    let nics: Vec<serde_json::Value> = serde_json::from_str::<Vec<serde_json::Value>>(
        h.as_ref().map_or("[]", |h| h.nics.as_str()),
    )
    .unwrap_or_default()
    .into_iter()
    .map(|n| serde_json::json!({"name": n["name"], "mac": n["mac"], "speed_mbps": n["speed_mbps"]}))
    .collect();
    ClaimView {
        id: c.id,
        state: c.state.as_str().to_owned(),
        reason: c.reason,
        tenant: c.tenant_id,
        pod_manager: c.pod_manager,
        selector: serde_json::from_str(&c.selector).unwrap_or_default(),
        min_cpu: c.min_cpu,
        min_memory_mib: c.min_memory_mib,
        image: serde_json::from_str(&c.image).unwrap_or_default(),
        online: c.online,
        has_user_data: c.user_data.is_some(),
        host: h.map(|h| ClaimedHostView {
            provisioning_state: podium_app::lifecycle::shown_state(&h).as_str().to_owned(),
            id: h.id,
            name: h.name,
            uuid: h.uuid,
            manufacturer: h.manufacturer,
            model: h.model,
            cpu_count: h.cpu_count,
            memory_mib: h.memory_mib,
            nics: serde_json::Value::Array(nics),
            power_state: h.power_state,
            addresses: addresses
                .into_iter()
                .map(|a| AddressView {
                    address: a.row.address,
                    prefix: a.prefix,
                    gateway: a.gateway,
                    dns_servers: a.dns_servers,
                })
                .collect(),
        }),
        created_at: c.created_at,
        updated_at: c.updated_at,
    }
}

/// Claims a host: binds at once to a free matching host, or waits as `pending`.
#[utoipa::path(post, path = "/v1/claims", tag = "claims", request_body = ClaimCreate,
    responses((status = 201, body = ClaimView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_create(
    State(podium): State<Podium>,
    TenantCaller(caller): TenantCaller,
    ApiJson(params): ApiJson<ClaimCreate>,
) -> ApiResult<(StatusCode, Json<ClaimView>)> {
    let claim = podium.claim_create(&caller, params).await?;
    let full = podium.claim_view(&caller, &claim.id).await?;
    Ok((StatusCode::CREATED, Json(full_view(&podium, full).await?)))
}

#[utoipa::path(get, path = "/v1/claims", tag = "claims",
    responses((status = 200, body = List<ClaimView>)),
    security(("bearer" = [])))]
pub(super) async fn claim_list(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
) -> ApiResult<Json<List<ClaimView>>> {
    let mut items = Vec::new();
    for pair in podium.claim_list(&caller).await? {
        items.push(full_view(&podium, pair).await?);
    }
    Ok(Json(List { items, next: None }))
}

#[utoipa::path(get, path = "/v1/claims/{id}", tag = "claims", params(("id" = String, Path)),
    responses((status = 200, body = ClaimView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_view(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    Path(id): Path<ClaimId>,
) -> ApiResult<Json<ClaimView>> {
    let pair = podium.claim_view(&caller, &id).await?;
    Ok(Json(full_view(&podium, pair).await?))
}

/// Powers the host on or off (`online`), or changes the user data.
#[utoipa::path(patch, path = "/v1/claims/{id}", tag = "claims", params(("id" = String, Path)),
    request_body = ClaimUpdate,
    responses((status = 200, body = ClaimView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_update(
    State(podium): State<Podium>,
    WritableCaller(caller): WritableCaller,
    Path(id): Path<ClaimId>,
    ApiJson(params): ApiJson<ClaimUpdate>,
) -> ApiResult<Json<ClaimView>> {
    let pair = podium.claim_update(&caller, &id, params).await?;
    Ok(Json(full_view(&podium, pair).await?))
}

/// Releases the claim: the host is deprovisioned before anyone else can have it.
#[utoipa::path(delete, path = "/v1/claims/{id}", tag = "claims", params(("id" = String, Path)),
    responses((status = 202), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_delete(
    State(podium): State<Podium>,
    WritableCaller(caller): WritableCaller,
    Path(id): Path<ClaimId>,
) -> ApiResult<StatusCode> {
    podium.claim_delete(&caller, &id).await?;
    Ok(StatusCode::ACCEPTED)
}

/// The operations run for the claim's host at its tenant's request (power on and off), newest
/// first.
#[utoipa::path(get, path = "/v1/claims/{id}/operations", tag = "claims",
    params(("id" = String, Path), ("limit" = Option<u32>, Query, minimum = 1, maximum = 1000), ("cursor" = Option<String>, Query)),
    responses((status = 200, body = List<super::views::OperationView>), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_operations(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    Path(id): Path<ClaimId>,
    super::extract::ApiQuery(q): super::extract::ApiQuery<podium_types::requests::PageParams>,
) -> ApiResult<Json<List<super::views::OperationView>>> {
    let page = podium_app::app::page(q.limit, q.cursor)?;
    let paged = podium.claim_operations(&caller, &id, page).await?;
    Ok(Json(List::from_paged(paged)))
}
