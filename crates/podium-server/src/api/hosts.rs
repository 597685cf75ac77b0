//! `/v1/hosts` and `/v1/operations`: the machines behind pod managers and the actions on them
//! (admin only).

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use podium_types::{
    Bios, BiosChange, ChassisId, Firmware, FirmwareUpdate, HardwareInventory, HostId, OperationId,
    PodManagerId, SecureBoot, SecureBootChange,
};

use super::error::{ApiResult, ErrorBody};
use super::extract::{AdminCaller, ApiJson, ApiQuery};
use podium_app::app::Podium;
use podium_app::app::page;
use podium_app::error::Error;
use podium_app::hardware::HardwareOf;
use podium_types::requests::{
    BootParams, HostCreate, HostUpdate, MaintenanceParams, MediaParams, OperationQuery, PowerParams,
};
use podium_types::views::{HostView, List, OperationView};
use podium_types::{HostFilter, OperationFilter};

/// Lists hosts. Query: `pod_manager`, `state`, `power_state`, `name`, `label=KEY=VALUE`
/// (repeatable; all must match), `chassis` (hosts in that chassis or any chassis within it: a
/// rack's, an enclosure's), `limit`, `cursor`.
#[utoipa::path(get, path = "/v1/hosts", tag = "hosts",
    params(("pod_manager" = Option<String>, Query), ("state" = Option<String>, Query),
        ("power_state" = Option<String>, Query), ("name" = Option<String>, Query),
        ("chassis" = Option<String>, Query),
        ("label" = Option<Vec<String>>, Query),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 1000), ("cursor" = Option<String>, Query)),
    responses((status = 200, body = List<HostView>), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<List<HostView>>> {
    let mut filter = HostFilter::default();
    let (mut limit, mut cursor) = (None, None);
    for (key, value) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        let value = value.into_owned();
        match key.as_ref() {
            "pod_manager" => {
                filter.pod_manager = Some(
                    PodManagerId::parse(&value)
                        .map_err(|e| Error::invalid("pod_manager", e.to_string()))?,
                )
            }
            "state" => filter.state = Some(value),
            "power_state" => filter.power_state = Some(value),
            "name" => filter.name = Some(value),
            "chassis" => {
                filter.chassis = Some(
                    ChassisId::parse(&value)
                        .map_err(|e| Error::invalid("chassis", e.to_string()))?,
                )
            }
            "label" => {
                let (k, v) = value
                    .split_once('=')
                    .ok_or_else(|| Error::invalid("label", "a label filter is `KEY=VALUE`"))?;
                filter.labels.push((k.to_owned(), v.to_owned()));
            }
            "limit" => {
                limit = Some(
                    value
                        .parse()
                        .map_err(|_| Error::invalid("limit", "must be a number"))?,
                )
            }
            "cursor" => cursor = Some(value),
            other => {
                return Err(
                    Error::invalid(other, format!("unknown query parameter `{other}`")).into(),
                );
            }
        }
    }
    let paged = podium
        .host_list(&caller, filter, page(limit, cursor)?)
        .await?;
    Ok(Json(paged))
}

/// Registers a host that has its own BMC under a pod manager acting as a site.
#[utoipa::path(post, path = "/v1/hosts", tag = "hosts", request_body = HostCreate,
    responses((status = 201, body = HostView), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody), (status = 502, body = ErrorBody), (status = 503, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_create(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiJson(params): ApiJson<HostCreate>,
) -> ApiResult<(StatusCode, Json<HostView>)> {
    let host = podium.host_create(&caller, params).await?;
    Ok((StatusCode::CREATED, Json(host)))
}

#[utoipa::path(get, path = "/v1/hosts/{id}", tag = "hosts", params(("id" = String, Path)),
    responses((status = 200, body = HostView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
) -> ApiResult<Json<HostView>> {
    Ok(Json(podium.host_view(&caller, &id).await?))
}

/// Sets a host's labels.
#[utoipa::path(patch, path = "/v1/hosts/{id}", tag = "hosts", params(("id" = String, Path)),
    request_body = HostUpdate,
    responses((status = 200, body = HostView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_update(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
    ApiJson(params): ApiJson<HostUpdate>,
) -> ApiResult<Json<HostView>> {
    Ok(Json(podium.host_update(&caller, &id, params).await?))
}

/// Powers a host on, off, or restarts it, through the driver.
#[utoipa::path(post, path = "/v1/hosts/{id}/power", tag = "hosts", params(("id" = String, Path)),
    request_body = PowerParams,
    responses((status = 202, body = OperationView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_power(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
    ApiJson(params): ApiJson<PowerParams>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium.host_power(&caller, &id, params).await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// Sets a boot override.
#[utoipa::path(post, path = "/v1/hosts/{id}/boot", tag = "hosts", params(("id" = String, Path)),
    request_body = BootParams,
    responses((status = 202, body = OperationView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_boot(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
    ApiJson(params): ApiJson<BootParams>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium.host_boot(&caller, &id, params).await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// Inserts or ejects virtual media.
#[utoipa::path(post, path = "/v1/hosts/{id}/media", tag = "hosts", params(("id" = String, Path)),
    request_body = MediaParams,
    responses((status = 202, body = OperationView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_media(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
    ApiJson(params): ApiJson<MediaParams>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium.host_media(&caller, &id, params).await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// The host's BIOS as its BMC reports it now: attributes, their registry (types, allowed
/// values, read-only), what is staged and when a change can apply. 409 `bios_unsupported` where
/// the BMC has no BIOS settings.
#[utoipa::path(get, path = "/v1/hosts/{id}/bios", tag = "hosts", params(("id" = String, Path)),
    responses((status = 200, body = Bios), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_bios(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
) -> ApiResult<Json<Bios>> {
    Ok(Json(
        podium.hardware_bios(&caller, HardwareOf::Host(&id)).await?,
    ))
}

/// Changes BIOS attributes, as an operation: checked first against the BMC's registry (an
/// unknown or read-only attribute, or a value it does not allow, is a 422 naming
/// `attributes.NAME`), then staged, then read back (the operation's result says which applied
/// and which are pending the next reset).
#[utoipa::path(patch, path = "/v1/hosts/{id}/bios", tag = "hosts", params(("id" = String, Path)),
    request_body = BiosChange,
    responses((status = 202, body = OperationView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_bios_change(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
    ApiJson(change): ApiJson<BiosChange>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium
        .hardware_bios_change(&caller, HardwareOf::Host(&id), change)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// Resets the BIOS attributes to their defaults, as an operation.
#[utoipa::path(post, path = "/v1/hosts/{id}/bios/reset", tag = "hosts", params(("id" = String, Path)),
    responses((status = 202, body = OperationView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_bios_reset(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium
        .hardware_bios_reset(&caller, HardwareOf::Host(&id))
        .await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// The host's full inventory as its BMC reports it now: processors, memory modules, storage
/// controllers with their drives, NICs with their link. A part the BMC lacks is empty; 409
/// `hardware_unsupported` where it has none of them.
#[utoipa::path(get, path = "/v1/hosts/{id}/hardware", tag = "hosts", params(("id" = String, Path)),
    responses((status = 200, body = HardwareInventory), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_hardware(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
) -> ApiResult<Json<HardwareInventory>> {
    Ok(Json(
        podium
            .hardware_inventory(&caller, HardwareOf::Host(&id))
            .await?,
    ))
}

/// The host's UEFI secure boot as its BMC reports it now. 409 `secure_boot_unsupported` where
/// the BMC has none for it.
#[utoipa::path(get, path = "/v1/hosts/{id}/secure_boot", tag = "hosts", params(("id" = String, Path)),
    responses((status = 200, body = SecureBoot), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_secure_boot(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
) -> ApiResult<Json<SecureBoot>> {
    Ok(Json(
        podium
            .hardware_secure_boot(&caller, HardwareOf::Host(&id))
            .await?,
    ))
}

/// Turns secure boot on or off from the next boot on, as an operation (kind `secure_boot`)
/// that reads it back.
#[utoipa::path(put, path = "/v1/hosts/{id}/secure_boot", tag = "hosts", params(("id" = String, Path)),
    request_body = SecureBootChange,
    responses((status = 202, body = OperationView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_secure_boot_set(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
    ApiJson(change): ApiJson<SecureBootChange>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium
        .hardware_secure_boot_set(&caller, HardwareOf::Host(&id), change)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// The host's firmware components (its BIOS, its BMC, its NICs) as its BMC reports them now.
/// 409 `firmware_unsupported` where the BMC reports none.
#[utoipa::path(get, path = "/v1/hosts/{id}/firmware", tag = "hosts", params(("id" = String, Path)),
    responses((status = 200, body = Firmware), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_firmware(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
) -> ApiResult<Json<Firmware>> {
    Ok(Json(
        podium
            .hardware_firmware(&caller, HardwareOf::Host(&id))
            .await?,
    ))
}

/// Updates firmware components from an image the BMC downloads, as an operation (kind
/// `firmware_update`) that follows the BMC's task: its `progress` shows the task's state,
/// percent and messages; its result each target's version before and after. A target that is
/// not one of the host's components, or that the BMC says cannot be updated, is a 422 naming
/// `targets[i]`.
#[utoipa::path(post, path = "/v1/hosts/{id}/firmware/update", tag = "hosts", params(("id" = String, Path)),
    request_body = FirmwareUpdate,
    responses((status = 202, body = OperationView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_firmware_update(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
    ApiJson(update): ApiJson<FirmwareUpdate>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium
        .hardware_firmware_update(&caller, HardwareOf::Host(&id), update)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// Inspects a host again: its inventory read through the driver (and, where the pod manager has
/// DHCP-less pools, its preprovisioning address and config drive prepared first).
#[utoipa::path(post, path = "/v1/hosts/{id}/inspect", tag = "hosts", params(("id" = String, Path)),
    responses((status = 202, body = OperationView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_inspect(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
) -> ApiResult<(StatusCode, Json<OperationView>)> {
    let op = podium.host_inspect(&caller, &id).await?;
    Ok((StatusCode::ACCEPTED, Json(op)))
}

/// Puts a host in maintenance: nothing new starts on it but the admin's own power, boot and
/// media actions, and no claim binds to it, until the maintenance ends.
#[utoipa::path(put, path = "/v1/hosts/{id}/maintenance", tag = "hosts", params(("id" = String, Path)),
    request_body = MaintenanceParams,
    responses((status = 200, body = HostView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_maintenance_set(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
    ApiJson(params): ApiJson<MaintenanceParams>,
) -> ApiResult<Json<HostView>> {
    let host = podium
        .host_maintenance_set(&caller, &id, params.reason)
        .await?;
    Ok(Json(host))
}

/// Ends a host's maintenance: what waited runs, pending claims may bind to it.
#[utoipa::path(delete, path = "/v1/hosts/{id}/maintenance", tag = "hosts", params(("id" = String, Path)),
    responses((status = 200, body = HostView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_maintenance_end(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
) -> ApiResult<Json<HostView>> {
    Ok(Json(podium.host_maintenance_end(&caller, &id).await?))
}

/// Operations, newest first: of a host, a pod manager or a claim, in some states, of some
/// kinds (`?status=queued,running,failed`: what is under way or failed now).
#[utoipa::path(get, path = "/v1/operations", tag = "operations", params(OperationQuery),
    responses((status = 200, body = List<OperationView>)),
    security(("bearer" = [])))]
pub(super) async fn operation_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiQuery(q): ApiQuery<OperationQuery>,
) -> ApiResult<Json<List<OperationView>>> {
    let filter = OperationFilter {
        host: q.host,
        pod_manager: q.pod_manager,
        claim: q.claim,
        statuses: q.status,
        kinds: q.kind,
    };
    let paged = podium
        .operation_list(&caller, filter, page(q.limit, q.cursor)?)
        .await?;
    Ok(Json(paged))
}

#[utoipa::path(get, path = "/v1/operations/{id}", tag = "operations", params(("id" = String, Path)),
    responses((status = 200, body = OperationView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn operation_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<OperationId>,
) -> ApiResult<Json<OperationView>> {
    Ok(Json(podium.operation_view(&caller, &id).await?))
}
