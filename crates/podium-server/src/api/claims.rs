//! `/v1/claims`: a tenant's claims on hosts (a tenant sees its own; an admin sees all).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use podium_types::ClaimId;

use super::error::{ApiResult, ErrorBody};
use super::extract::{AnyCaller, ApiJson, TenantCaller, WritableCaller};
use podium_app::app::Podium;
use podium_types::requests::{ClaimCreate, ClaimUpdate};
use podium_types::views::{ClaimView, List, OperationView};

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
    Ok((StatusCode::CREATED, Json(claim)))
}

#[utoipa::path(get, path = "/v1/claims", tag = "claims",
    responses((status = 200, body = List<ClaimView>)),
    security(("bearer" = [])))]
pub(super) async fn claim_list(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
) -> ApiResult<Json<List<ClaimView>>> {
    Ok(Json(podium.claim_list(&caller).await?))
}

#[utoipa::path(get, path = "/v1/claims/{id}", tag = "claims", params(("id" = String, Path)),
    responses((status = 200, body = ClaimView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_view(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    Path(id): Path<ClaimId>,
) -> ApiResult<Json<ClaimView>> {
    Ok(Json(podium.claim_view(&caller, &id).await?))
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
    Ok(Json(podium.claim_update(&caller, &id, params).await?))
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
    responses((status = 200, body = List<OperationView>), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_operations(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    Path(id): Path<ClaimId>,
    super::extract::ApiQuery(q): super::extract::ApiQuery<podium_types::requests::PageParams>,
) -> ApiResult<Json<List<OperationView>>> {
    let page = podium_app::app::page(q.limit, q.cursor)?;
    Ok(Json(podium.claim_operations(&caller, &id, page).await?))
}
