//! `/v1/pod_managers/{uuid}/composition`, `/v1/pod_managers/{uuid}/composed_nodes` and
//! `/v1/composed_nodes/{id}`: resource blocks and the nodes composed of them (admin only).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use podium_types::{HostId, PodManagerId};

use super::error::{ApiResult, ErrorBody};
use super::extract::{AdminCaller, ApiJson, ApiQuery};
use podium_app::app::Podium;
use podium_app::app::page;
use podium_types::requests::{ComposedNodeCreate, PageQuery};
use podium_types::views::{ComposedNodeView, CompositionView, List};

/// The pod manager's composition service as its driver reads it now: every resource block
/// (its state, its zones, what it holds, the systems it is composed into), the zones, those
/// offered for composition, and how many blocks of each type a node takes. A driver that
/// composes nothing is a 409 (`composition_unsupported`).
#[utoipa::path(get, path = "/v1/pod_managers/{uuid}/composition", tag = "pod_managers",
    params(("uuid" = String, Path)),
    responses((status = 200, body = CompositionView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 502, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn composition_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
) -> ApiResult<Json<CompositionView>> {
    Ok(Json(podium.composition_view(&caller, &uuid).await?))
}

/// The nodes Podium composed at a pod manager, by id.
#[utoipa::path(get, path = "/v1/pod_managers/{uuid}/composed_nodes", tag = "pod_managers",
    params(("uuid" = String, Path), PageQuery),
    responses((status = 200, body = List<ComposedNodeView>), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn composed_node_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> ApiResult<Json<List<ComposedNodeView>>> {
    Ok(Json(
        podium
            .composed_node_list(&caller, &uuid, page(q.limit, q.cursor)?)
            .await?,
    ))
}

/// Composes a node of the resource blocks named, or of blocks Podium picks to meet a
/// requirement (within one zone the service offers and its limits). Blocks named that break the
/// service's rules are a 422 naming `blocks`; a block taken is a 409 (`block_taken`), as is a
/// requirement no zone's free blocks meet (`no_blocks_fit`). The node is a host of the pod
/// manager, registered and inspected as any.
#[utoipa::path(post, path = "/v1/pod_managers/{uuid}/composed_nodes", tag = "pod_managers",
    params(("uuid" = String, Path)), request_body = ComposedNodeCreate,
    responses((status = 201, body = ComposedNodeView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody), (status = 502, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn composed_node_create(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
    ApiJson(params): ApiJson<ComposedNodeCreate>,
) -> ApiResult<(StatusCode, Json<ComposedNodeView>)> {
    let node = podium.composed_node_create(&caller, &uuid, params).await?;
    Ok((StatusCode::CREATED, Json(node)))
}

/// A composed node.
#[utoipa::path(get, path = "/v1/composed_nodes/{id}", tag = "pod_managers",
    params(("id" = String, Path)),
    responses((status = 200, body = ComposedNodeView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn composed_node_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
) -> ApiResult<Json<ComposedNodeView>> {
    Ok(Json(podium.composed_node_view(&caller, &id).await?))
}

/// Decomposes a node, freeing its blocks, and removes its host. A node a claim holds is a 409
/// (`host_claimed`).
#[utoipa::path(delete, path = "/v1/composed_nodes/{id}", tag = "pod_managers",
    params(("id" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 502, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn composed_node_delete(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
) -> ApiResult<StatusCode> {
    podium.composed_node_delete(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
