//! `/v1/claims`: a tenant's claims on hosts (a tenant sees its own; an admin sees all).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use podium_types::{
    Bios, BiosChange, ClaimId, Firmware, FirmwareUpdate, HardwareInventory, SecureBoot,
    SecureBootChange,
};

use super::error::{ApiResult, ErrorBody};
use super::extract::{AnyCaller, ApiJson, TenantCaller, WritableCaller};
use podium_app::app::Podium;
use podium_app::hardware::HardwareOf;
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

/// The claimed host's BIOS as its BMC reports it now; an attribute the site does not let
/// tenants change is read-only in the registry. 409 `claim_not_bound` where the claim holds no
/// host, `bios_unsupported` where the BMC has no BIOS settings.
#[utoipa::path(get, path = "/v1/claims/{id}/bios", tag = "claims", params(("id" = String, Path)),
    responses((status = 200, body = Bios), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_bios(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    Path(id): Path<ClaimId>,
) -> ApiResult<Json<Bios>> {
    Ok(Json(
        podium
            .hardware_bios(&caller, HardwareOf::Claim(&id))
            .await?,
    ))
}

/// Changes BIOS attributes of the claimed host, as an operation run at the claim's request:
/// only those the site lets tenants change (`tenant_firmware.bios_attributes` of its pod
/// manager; any other is a 422 naming `attributes.NAME`), checked against the BMC's registry as
/// an admin's change is.
#[utoipa::path(patch, path = "/v1/claims/{id}/bios", tag = "claims", params(("id" = String, Path)),
    request_body = BiosChange,
    responses((status = 202, body = OperationView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_bios_change(
    State(podium): State<Podium>,
    WritableCaller(caller): WritableCaller,
    Path(id): Path<ClaimId>,
    ApiJson(change): ApiJson<BiosChange>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium
        .hardware_bios_change(&caller, HardwareOf::Claim(&id), change)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// Always refused (403): a reset sets every BIOS attribute, so only the site's admin resets a
/// host's BIOS (`POST /v1/hosts/{id}/bios/reset`).
#[utoipa::path(post, path = "/v1/claims/{id}/bios/reset", tag = "claims", params(("id" = String, Path)),
    responses((status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_bios_reset(
    State(podium): State<Podium>,
    WritableCaller(caller): WritableCaller,
    Path(id): Path<ClaimId>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium
        .hardware_bios_reset(&caller, HardwareOf::Claim(&id))
        .await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// The claimed host's UEFI secure boot as its BMC reports it now.
#[utoipa::path(get, path = "/v1/claims/{id}/secure_boot", tag = "claims", params(("id" = String, Path)),
    responses((status = 200, body = SecureBoot), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_secure_boot(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    Path(id): Path<ClaimId>,
) -> ApiResult<Json<SecureBoot>> {
    Ok(Json(
        podium
            .hardware_secure_boot(&caller, HardwareOf::Claim(&id))
            .await?,
    ))
}

/// Turns the claimed host's secure boot on or off, as an operation; 403 where the site does
/// not let tenants (`tenant_firmware.secure_boot`).
#[utoipa::path(put, path = "/v1/claims/{id}/secure_boot", tag = "claims", params(("id" = String, Path)),
    request_body = SecureBootChange,
    responses((status = 202, body = OperationView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_secure_boot_set(
    State(podium): State<Podium>,
    WritableCaller(caller): WritableCaller,
    Path(id): Path<ClaimId>,
    ApiJson(change): ApiJson<SecureBootChange>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium
        .hardware_secure_boot_set(&caller, HardwareOf::Claim(&id), change)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// The claimed host's firmware components as its BMC reports them now.
#[utoipa::path(get, path = "/v1/claims/{id}/firmware", tag = "claims", params(("id" = String, Path)),
    responses((status = 200, body = Firmware), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_firmware(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    Path(id): Path<ClaimId>,
) -> ApiResult<Json<Firmware>> {
    Ok(Json(
        podium
            .hardware_firmware(&caller, HardwareOf::Claim(&id))
            .await?,
    ))
}

/// Updates firmware of the claimed host from an image, as an admin's update is (an operation
/// following the BMC's task); 403 where the site does not let tenants
/// (`tenant_firmware.firmware_update`).
#[utoipa::path(post, path = "/v1/claims/{id}/firmware/update", tag = "claims", params(("id" = String, Path)),
    request_body = FirmwareUpdate,
    responses((status = 202, body = OperationView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_firmware_update(
    State(podium): State<Podium>,
    WritableCaller(caller): WritableCaller,
    Path(id): Path<ClaimId>,
    ApiJson(update): ApiJson<FirmwareUpdate>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium
        .hardware_firmware_update(&caller, HardwareOf::Claim(&id), update)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// The claimed host's full inventory as its BMC reports it now.
#[utoipa::path(get, path = "/v1/claims/{id}/hardware", tag = "claims", params(("id" = String, Path)),
    responses((status = 200, body = HardwareInventory), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_hardware(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    Path(id): Path<ClaimId>,
) -> ApiResult<Json<HardwareInventory>> {
    Ok(Json(
        podium
            .hardware_inventory(&caller, HardwareOf::Claim(&id))
            .await?,
    ))
}
