//! The deploy agent's API: what the Ironic Python Agent in a host's ramdisk calls, under
//! `/agent` (its `api_url`) on the API's listener and on the config drives' listener, where the
//! BMCs, and so the hosts, reach Podium (`docs/deploy.md`). No token: the agent is known by
//! its MACs at lookup and by the token issued then afterwards (`podium-app`'s `agent`). Not in
//! the OpenAPI document: it is Ironic's API, as IPA speaks it.
//!
//! `GET /v1/hosts/{id}/agent` (an admin's view of a host's agent) is the API's own.

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use podium_app::agent::{AgentView, HeartbeatRequest};
use podium_app::app::Podium;
use podium_types::HostId;
use serde::Deserialize;

use super::error::{ApiResult, ErrorBody};
use super::extract::{AdminCaller, ApiJson, ApiQuery};

/// The agent's routes, under [`podium_app::agent::API_PATH`].
pub(crate) fn router() -> Router<Podium> {
    let root = podium_app::agent::API_PATH;
    Router::new()
        .route(root, get(api_root))
        .route(&format!("{root}/"), get(api_root))
        .route(&format!("{root}/v1/lookup"), get(lookup))
        .route(&format!("{root}/v1/heartbeat/{{host}}"), post(heartbeat))
}

async fn api_root(State(podium): State<Podium>) -> Json<serde_json::Value> {
    Json(podium.agent_api_root())
}

#[derive(Debug, Deserialize)]
struct Lookup {
    /// The agent's MACs, comma-separated.
    addresses: Option<String>,
    /// The node IPA believes it is, when it looks up again; Podium goes by the MACs.
    #[serde(rename = "node_uuid")]
    _node_uuid: Option<String>,
}

async fn lookup(
    State(podium): State<Podium>,
    ApiQuery(query): ApiQuery<Lookup>,
) -> ApiResult<Json<serde_json::Value>> {
    Ok(Json(podium.agent_lookup(query.addresses.as_deref()).await?))
}

async fn heartbeat(
    State(podium): State<Podium>,
    Path(host): Path<String>,
    ApiJson(beat): ApiJson<HeartbeatRequest>,
) -> ApiResult<StatusCode> {
    podium.agent_heartbeat(&host, beat).await?;
    Ok(StatusCode::ACCEPTED)
}

/// The deploy agent a host runs, or is booting (`docs/deploy.md`).
#[utoipa::path(get, path = "/v1/hosts/{id}/agent", tag = "hosts", params(("id" = String, Path)),
    responses((status = 200, body = AgentView),
              (status = 404, body = ErrorBody, description = "no such host, or no agent expected on it")),
    security(("bearer" = [])))]
pub(super) async fn host_agent(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
) -> ApiResult<Json<AgentView>> {
    Ok(Json(podium.agent_get(&caller, &id).await?))
}
