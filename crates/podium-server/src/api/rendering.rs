//! Network templates (admin, per pod manager), the rendered documents of a host or a claim, and
//! config drives: made by an admin or a claim's tenant, downloaded by a BMC with no token.
//! `docs/network-config.md` describes all of it.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use podium_types::{ClaimId, HostId, PodManagerId};

use super::error::{ApiResult, ErrorBody};
use super::extract::{AdminCaller, AnyCaller, ApiJson, ApiQuery, WritableCaller};
use podium_app::app::Podium;
use podium_app::rendering::DriveFor;
use podium_types::Phase;
use podium_types::requests::{ConfigDriveCreate, RenderedQuery};
use podium_types::views::{ConfigDriveView, RenderedView};

/// The URL a BMC reaches Podium at: `--public-url` where set, else the address the caller used,
/// with the scheme of the listener that serves downloads, and its port where it is one of its
/// own (`--config-drive-listen`).
fn base_url(podium: &Podium, uri: &Uri, headers: &HeaderMap) -> String {
    if let Some(url) = podium.public_url() {
        return url.as_str().trim_end_matches('/').to_owned();
    }
    // HTTP/2 names the host in the request's authority, HTTP/1.1 in `Host`.
    let host = uri
        .authority()
        .map(|a| a.as_str())
        .or_else(|| headers.get(header::HOST).and_then(|h| h.to_str().ok()))
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        })
        .unwrap_or("localhost");
    match podium.download_listener() {
        Some(listener) if listener.dedicated => {
            // The name the caller used, the port of the downloads' listener.
            let name = url::Url::parse(&format!("http://{host}"))
                .ok()
                .and_then(|u| u.host_str().map(str::to_owned))
                .unwrap_or_else(|| "localhost".into());
            let port = listener.url.port_or_known_default().unwrap_or(80);
            format!("http://{name}:{port}")
        }
        Some(listener) => format!("{}://{host}", listener.url.scheme()),
        None => format!("http://{host}"),
    }
}

/// The pod manager's network template.
#[utoipa::path(get, path = "/v1/pod_managers/{uuid}/network_template", tag = "rendering",
    params(("uuid" = String, Path)),
    responses((status = 200, body = Object), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn network_template_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
) -> ApiResult<Json<serde_json::Value>> {
    Ok(Json(podium.network_template_view(&caller, &uuid).await?))
}

/// Sets the pod manager's network template (`docs/network-config.md`), checked by its renderer.
#[utoipa::path(put, path = "/v1/pod_managers/{uuid}/network_template", tag = "rendering",
    params(("uuid" = String, Path)), request_body = Object,
    responses((status = 200, body = Object), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn network_template_put(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
    ApiJson(template): ApiJson<serde_json::Value>,
) -> ApiResult<Json<serde_json::Value>> {
    Ok(Json(
        podium
            .network_template_put(&caller, &uuid, template)
            .await?,
    ))
}

#[utoipa::path(delete, path = "/v1/pod_managers/{uuid}/network_template", tag = "rendering",
    params(("uuid" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn network_template_delete(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(uuid): Path<PodManagerId>,
) -> ApiResult<StatusCode> {
    podium.network_template_delete(&caller, &uuid).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A host's documents for a phase. Phase `provisioning` of a host no claim is bound to is a
/// preview (`preview` says so): the site's template rendered for the host, each pool's network
/// address standing in for the address a claim would be given, nothing allocated. Reading
/// documents holds no address.
#[utoipa::path(get, path = "/v1/hosts/{id}/rendered", tag = "rendering",
    params(("id" = String, Path), RenderedQuery),
    responses((status = 200, body = RenderedView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_rendered(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
    ApiQuery(query): ApiQuery<RenderedQuery>,
) -> ApiResult<Json<RenderedView>> {
    let phase = query.phase.unwrap_or(Phase::Provisioning);
    Ok(Json(podium.host_rendered(&caller, &id, phase).await?))
}

/// Makes a config drive for a host and answers its URL.
#[utoipa::path(post, path = "/v1/hosts/{id}/config_drive", tag = "rendering",
    params(("id" = String, Path)), request_body = ConfigDriveCreate,
    responses((status = 201, body = ConfigDriveView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn host_config_drive(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<HostId>,
    uri: Uri,
    headers: HeaderMap,
    ApiJson(params): ApiJson<ConfigDriveCreate>,
) -> ApiResult<(StatusCode, Json<ConfigDriveView>)> {
    let phase = params.phase.unwrap_or(Phase::Provisioning);
    let base = base_url(&podium, &uri, &headers);
    let drive = podium
        .config_drive_create(
            &caller,
            DriveFor::Host(&id, phase),
            params.expires_in,
            &base,
        )
        .await?;
    Ok((StatusCode::CREATED, Json(drive)))
}

/// A claim's documents: what its host reads when it boots.
#[utoipa::path(get, path = "/v1/claims/{id}/rendered", tag = "rendering",
    params(("id" = String, Path)),
    responses((status = 200, body = RenderedView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_rendered(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    Path(id): Path<ClaimId>,
) -> ApiResult<Json<RenderedView>> {
    Ok(Json(podium.claim_rendered(&caller, &id).await?))
}

/// Makes a config drive for a bound claim and answers its URL.
#[utoipa::path(post, path = "/v1/claims/{id}/config_drive", tag = "rendering",
    params(("id" = String, Path)), request_body = ConfigDriveCreate,
    responses((status = 201, body = ConfigDriveView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn claim_config_drive(
    State(podium): State<Podium>,
    WritableCaller(caller): WritableCaller,
    Path(id): Path<ClaimId>,
    uri: Uri,
    headers: HeaderMap,
    ApiJson(params): ApiJson<ConfigDriveCreate>,
) -> ApiResult<(StatusCode, Json<ConfigDriveView>)> {
    if params.phase.is_some_and(|p| p != Phase::Provisioning) {
        return Err(podium_app::error::Error::invalid(
            "phase",
            "a claim's config drive is for provisioning",
        )
        .into());
    }
    let base = base_url(&podium, &uri, &headers);
    let drive = podium
        .config_drive_create(&caller, DriveFor::Claim(&id), params.expires_in, &base)
        .await?;
    Ok((StatusCode::CREATED, Json(drive)))
}

/// Downloads a config drive image. No token: the URL is the credential, until it expires.
#[utoipa::path(get, path = "/v1/config_drives/{name}", tag = "rendering",
    params(("name" = String, Path, description = "`<token>.img`, as the URL was given")),
    responses((status = 200, content_type = "application/octet-stream"), (status = 404, body = ErrorBody)))]
pub(super) async fn config_drive_download(
    State(podium): State<Podium>,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    let (sha256, bytes) = podium.config_drive_image(&name).await?;
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"config-2.img\""),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(etag) = HeaderValue::from_str(&format!("\"{sha256}\"")) {
        headers.insert(header::ETAG, etag);
    }
    Ok(response)
}
