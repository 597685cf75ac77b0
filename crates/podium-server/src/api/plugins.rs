//! `/v1/plugins`: upload and list plugins (admin only).

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::error::{ApiResult, ErrorBody};
use super::extract::AdminCaller;
use podium_app::app::Podium;
use podium_app::error::Error;
use podium_app::plugins::MAX_PLUGIN_SIZE;
use podium_types::views::{PluginList, PluginView};

/// Lists every registered plugin with its world.
#[utoipa::path(get, path = "/v1/plugins", tag = "plugins",
    responses((status = 200, body = PluginList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn plugin_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
) -> ApiResult<Json<PluginList>> {
    Ok(Json(podium.plugin_list(&caller).await?))
}

/// Registers a plugin from the raw bytes of its `.wasm` component.
///
/// Answers 201 with the new plugin, or 200 if these exact bytes were registered before.
#[utoipa::path(post, path = "/v1/plugins", tag = "plugins",
    request_body(content = Vec<u8>, content_type = "application/wasm"),
    responses((status = 201, body = PluginView), (status = 200, body = PluginView),
        (status = 409, body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn plugin_create(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    body: Body,
) -> ApiResult<(StatusCode, Json<PluginView>)> {
    caller.require_admin()?;
    let bytes = axum::body::to_bytes(body, MAX_PLUGIN_SIZE)
        .await
        .map_err(|_| Error::TooLarge {
            limit: MAX_PLUGIN_SIZE,
        })?;
    let (plugin, created) = podium.plugin_create(&caller, bytes.to_vec()).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(plugin)))
}

/// One plugin, by sha256.
#[utoipa::path(get, path = "/v1/plugins/{sha256}", tag = "plugins",
    params(("sha256" = String, Path, description = "The plugin's sha256")),
    responses((status = 200, body = PluginView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn plugin_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(sha256): Path<String>,
) -> ApiResult<Json<PluginView>> {
    Ok(Json(podium.plugin_view(&caller, &sha256).await?))
}
