//! The HTTP API: the only module that knows HTTP. Handlers are a few lines each: extract, call
//! the `Podium` method of the same name, convert the result into a view.
//!
//! The router and the OpenAPI document come from the same `routes!` declarations, so the
//! document cannot drift from the routes (and the authorization sweep test walks it).

mod claims;
mod error;
mod extract;
mod grants;
mod hosts;
mod ip_pools;
mod plugins;
mod pod_managers;
mod rendering;
mod tenants;
mod views;

pub use error::{ApiError, ErrorBody};
pub use extract::ApiJson;

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Podium;
use crate::error::Error;

#[derive(OpenApi)]
#[openapi(
    info(title = "Podium", description = "A bare-metal platform whose moving parts are WebAssembly components."),
    modifiers(&BearerAuth),
    tags((name = "plugins", description = "WebAssembly plugins (admin)"),
         (name = "pod_managers", description = "Sites and the Redfish services in front of their machines (admin)"),
         (name = "hosts", description = "The machines behind pod managers (admin)"),
         (name = "operations", description = "Driver actions and their outcome (admin)"),
         (name = "grants", description = "Which tenant may claim hosts of which pod manager (admin)"),
         (name = "ipam", description = "Address pools and the addresses claimed from them (admin)"),
         (name = "claims", description = "A tenant's claims on hosts (tenants; admins read)"),
         (name = "tenants", description = "Tenants and credentials (admin); who am I (anyone)"),
         (name = "health", description = "Liveness"))
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The API's routes and their OpenAPI document.
pub fn routes() -> (Router<Podium>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(healthz))
        .routes(routes!(livez))
        .routes(routes!(plugins::plugin_list, plugins::plugin_create))
        .routes(routes!(plugins::plugin_view))
        .routes(routes!(
            pod_managers::pod_manager_list,
            pod_managers::pod_manager_create
        ))
        .routes(routes!(
            pod_managers::pod_manager_view,
            pod_managers::pod_manager_update,
            pod_managers::pod_manager_delete
        ))
        .routes(routes!(pod_managers::pod_manager_status_history))
        .routes(routes!(pod_managers::pod_manager_sync))
        .routes(routes!(hosts::host_list, hosts::host_create))
        .routes(routes!(hosts::host_view, hosts::host_update))
        .routes(routes!(hosts::host_power))
        .routes(routes!(hosts::host_boot))
        .routes(routes!(hosts::host_media))
        .routes(routes!(hosts::host_inspect))
        .routes(routes!(
            hosts::host_maintenance_set,
            hosts::host_maintenance_end
        ))
        .routes(routes!(hosts::operation_list))
        .routes(routes!(hosts::operation_view))
        .routes(routes!(tenants::tenant_list, tenants::tenant_create))
        .routes(routes!(tenants::tenant_view, tenants::tenant_delete))
        .routes(routes!(
            tenants::tenant_token_list,
            tenants::tenant_token_create
        ))
        .routes(routes!(tenants::tenant_token_revoke))
        .routes(routes!(
            tenants::admin_token_list,
            tenants::admin_token_create
        ))
        .routes(routes!(tenants::admin_token_revoke))
        .routes(routes!(tenants::me))
        .routes(routes!(grants::grant_list, grants::grant_create))
        .routes(routes!(grants::grant_view, grants::grant_delete))
        .routes(routes!(claims::claim_list, claims::claim_create))
        .routes(routes!(
            claims::claim_view,
            claims::claim_update,
            claims::claim_delete
        ))
        .routes(routes!(ip_pools::ip_pool_list, ip_pools::ip_pool_create))
        .routes(routes!(
            ip_pools::ip_pool_view,
            ip_pools::ip_pool_update,
            ip_pools::ip_pool_delete
        ))
        .routes(routes!(ip_pools::ip_claim_list, ip_pools::ip_claim_create))
        .routes(routes!(ip_pools::ip_claim_view, ip_pools::ip_claim_delete))
        .routes(routes!(
            rendering::network_template_view,
            rendering::network_template_put,
            rendering::network_template_delete
        ))
        .routes(routes!(rendering::host_rendered))
        .routes(routes!(rendering::host_config_drive))
        .routes(routes!(claims::claim_operations))
        .routes(routes!(rendering::claim_rendered))
        .routes(routes!(rendering::claim_config_drive))
        .routes(routes!(rendering::config_drive_download))
        .split_for_parts()
}

/// The whole HTTP application.
pub fn router(podium: Podium) -> Router {
    let (routes, openapi) = routes();
    let openapi = Arc::new(openapi);
    routes
        .route(
            "/openapi.json",
            get(move || {
                let openapi = openapi.clone();
                async move { Json(openapi.as_ref().clone()) }
            }),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::extract::DefaultBodyLimit::max(extract::MAX_JSON_BODY))
        .layer(tower_http::trace::TraceLayer::new_for_http().make_span_with(request_span))
        .with_state(podium)
}

/// The span of a request: method and path, except the token of a config drive URL (the URL is
/// its credential), which never reaches the log.
fn request_span(request: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let path = request.uri().path();
    let path = if path.starts_with("/v1/config_drives/") {
        "/v1/config_drives/***"
    } else {
        path
    };
    tracing::debug_span!("request", method = %request.method(), path = %path)
}

async fn not_found() -> ApiError {
    Error::NotFound {
        kind: "route",
        id: "this path".into(),
    }
    .into()
}

async fn method_not_allowed() -> impl IntoResponse {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        Json(
            serde_json::json!({"error": {"code": "method_not_allowed", "message": "this method is not allowed on this path"}}),
        ),
    )
}

#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok` when the database answers.
    pub status: String,
}

/// Liveness: the process answers. No authentication, no database: for a liveness probe, which
/// must not restart Podium because its database is away (`/healthz` says that).
#[utoipa::path(get, path = "/livez", tag = "health", responses((status = 200, body = Health)))]
pub async fn livez() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
    })
}

/// Readiness: the process answers and its database does. No authentication.
#[utoipa::path(get, path = "/healthz", tag = "health",
    responses((status = 200, body = Health), (status = 503, body = ErrorBody)))]
pub async fn healthz(State(podium): State<Podium>) -> Result<Json<Health>, ApiError> {
    podium.datastore().ping().await.map_err(Error::from)?;
    Ok(Json(Health {
        status: "ok".into(),
    }))
}
