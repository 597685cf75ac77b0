//! `/v1/pod_managers/{uuid}/chassis` and `/v1/chassis/{id}`: the component tree behind each pod
//! manager (admin only), and a chassis' power.

use axum::Json;
use axum::extract::{Path, State};
use podium_types::{ChassisId, PodManagerId};

use super::error::{ApiResult, ErrorBody};
use super::extract::{AdminCaller, AnyCaller, ApiJson, ApiQuery};
use podium_app::app::Podium;
use podium_app::app::page;
use podium_types::requests::{PageQuery, PowerParams};
use podium_types::views::{ChassisView, GrantedChassisView, List};

/// The chassis of a pod manager (its racks, enclosures, blades...), as its last sync found
/// them, in the order they were first seen; each names its parent and its path.
#[utoipa::path(get, path = "/v1/pod_managers/{uuid}/chassis", tag = "pod_managers",
    params(("uuid" = String, Path), PageQuery),
    responses((status = 200, body = List<ChassisView>), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn chassis_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> ApiResult<Json<List<ChassisView>>> {
    Ok(Json(
        podium
            .chassis_list(&caller, &uuid, page(q.limit, q.cursor)?)
            .await?,
    ))
}

/// The chassis the caller's tenant's grant reaches at a pod manager it was granted (every
/// chassis of it, or the granted chassis and those within it), present ones only: what a
/// claim's `chassis` may name. Any other pod manager is not found. Tenants only.
#[utoipa::path(get, path = "/v1/me/pod_managers/{uuid}/chassis", tag = "grants",
    params(("uuid" = String, Path), PageQuery),
    responses((status = 200, body = List<GrantedChassisView>), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn granted_chassis_list(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    Path(uuid): Path<PodManagerId>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> ApiResult<Json<List<GrantedChassisView>>> {
    Ok(Json(
        podium
            .granted_chassis_list(&caller, &uuid, page(q.limit, q.cursor)?)
            .await?,
    ))
}

/// A chassis.
#[utoipa::path(get, path = "/v1/chassis/{id}", tag = "pod_managers", params(("id" = String, Path)),
    responses((status = 200, body = ChassisView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn chassis_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<ChassisId>,
) -> ApiResult<Json<ChassisView>> {
    Ok(Json(podium.chassis_view(&caller, &id).await?))
}

/// Powers a chassis on or off, or restarts it (an enclosure's own power: Redfish
/// `Chassis.Reset`), then reads its power back: the chassis as it stands after. `off` is the
/// BMC's `ForceOff` (an enclosure runs no OS to shut down); `graceful_shutdown` where the
/// chassis takes it. Refused with a 409 while a host within it is in use (claimed, or being
/// registered, inspected, provisioned or released), or where its driver has no chassis power
/// (a driver of contract 0.1.0 or 0.2.0, or a chassis that advertises no reset).
#[utoipa::path(post, path = "/v1/chassis/{id}/power", tag = "pod_managers", params(("id" = String, Path)),
    request_body = PowerParams,
    responses((status = 200, body = ChassisView), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 502, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn chassis_power(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<ChassisId>,
    ApiJson(params): ApiJson<PowerParams>,
) -> ApiResult<Json<ChassisView>> {
    Ok(Json(
        podium.chassis_power(&caller, &id, params.action).await?,
    ))
}
