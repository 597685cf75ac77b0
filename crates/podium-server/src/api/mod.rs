//! The HTTP API: the only module that knows HTTP. Handlers are a few lines each: extract, call
//! the `Podium` method of the same name, convert the result into a view.
//!
//! The router and the OpenAPI document come from the same `routes!` declarations, so the
//! document cannot drift from the routes (and the authorization sweep test walks it).

mod agent;
mod audit;
mod backup;
mod chassis;
mod claims;
mod composition;
mod console;
mod error;
mod events;
mod extract;
mod grants;
mod hosts;
mod ip_pools;
mod metrics;
mod plugins;
mod pod_managers;
mod redfish;
mod rendering;
mod tasks;
mod tenants;

pub(crate) use error::{ApiError, ErrorBody};
pub use metrics::MetricsAccess;

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use podium_app::app::Podium;
use podium_app::error::Error;

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
         (name = "admin", description = "The process's background tasks, metrics and backups (admin); the audit log (admins; a tenant its own)"),
         (name = "events", description = "Changes of claims, hosts and operations as server-sent events (admins everything; a tenant its own)"),
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
pub(crate) fn routes() -> (Router<Podium>, utoipa::openapi::OpenApi) {
    let (router, mut openapi) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(healthz))
        .routes(routes!(livez))
        .routes(routes!(plugins::plugin_list, plugins::plugin_create))
        .routes(routes!(tasks::task_list))
        .routes(routes!(backup::backup))
        .routes(routes!(audit::audit_list))
        .routes(routes!(events::events))
        .routes(routes!(metrics::metrics))
        .routes(routes!(tasks::task_run))
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
        .routes(routes!(chassis::chassis_list))
        .routes(routes!(chassis::chassis_view))
        .routes(routes!(chassis::chassis_power))
        .routes(routes!(chassis::granted_chassis_list))
        .routes(routes!(composition::composition_view))
        .routes(routes!(
            composition::composed_node_list,
            composition::composed_node_create
        ))
        .routes(routes!(
            composition::composed_node_view,
            composition::composed_node_delete
        ))
        .routes(routes!(hosts::host_list, hosts::host_create))
        .routes(routes!(hosts::host_view, hosts::host_update))
        .routes(routes!(hosts::host_power))
        .routes(routes!(hosts::host_boot))
        .routes(routes!(hosts::host_media))
        .routes(routes!(hosts::host_bios, hosts::host_bios_change))
        .routes(routes!(hosts::host_bios_reset))
        .routes(routes!(hosts::host_hardware))
        .routes(routes!(hosts::host_firmware))
        .routes(routes!(hosts::host_firmware_update))
        .routes(routes!(
            hosts::host_secure_boot,
            hosts::host_secure_boot_set
        ))
        .routes(routes!(hosts::host_inspect))
        .routes(routes!(agent::host_agent))
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
        .routes(routes!(grants::granted_pod_manager_list))
        .routes(routes!(grants::granted_pod_manager_view))
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
        .routes(routes!(claims::claim_bios, claims::claim_bios_change))
        .routes(routes!(claims::claim_bios_reset))
        .routes(routes!(
            claims::claim_secure_boot,
            claims::claim_secure_boot_set
        ))
        .routes(routes!(claims::claim_firmware))
        .routes(routes!(claims::claim_firmware_update))
        .routes(routes!(claims::claim_hardware))
        .routes(routes!(rendering::claim_rendered))
        .routes(routes!(rendering::claim_config_drive))
        .routes(routes!(rendering::config_drive_download))
        .split_for_parts();
    document_common_responses(&mut openapi);
    events::document_stream_event(&mut openapi);
    (router, openapi)
}

/// Adds the answers every operation of a kind can give, whatever its handler, to each
/// operation that does not document them itself: 401 and 403 where a token is needed (none,
/// an unknown or expired one; a tenant on an admin route, a read-only token on a write), 400,
/// 413 and 422 where a body is read (not JSON, too large, a field wrong), 422 where a path or
/// query parameter is read (malformed, unknown, a NUL byte), 503 where the database is read
/// (it took no query in time), 409 on every write to a host or a claim (each acts on a host's
/// state, which may not allow it now).
fn document_common_responses(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::path::ParameterIn;
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};

    let error = |description: &str| {
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorBody")))
                    .build(),
            )
            .build()
    };
    for (path, item) in &mut openapi.paths.paths {
        let operations = [
            (false, &mut item.get),
            (true, &mut item.put),
            (true, &mut item.post),
            (true, &mut item.delete),
            (true, &mut item.patch),
        ];
        for (write, op) in operations {
            let Some(op) = op else { continue };
            let mut add = |status: &str, description: &str| {
                op.responses
                    .responses
                    .entry(status.to_owned())
                    .or_insert_with(|| error(description).into());
            };
            let secured = op.security.as_ref().is_some_and(|s| !s.is_empty());
            let acts_on_host = write
                && (path.starts_with("/v1/hosts/{id}") || path.starts_with("/v1/claims/{id}"));
            let has_body = op.request_body.is_some();
            let has_params = op.parameters.as_ref().is_some_and(|p| {
                p.iter()
                    .any(|p| matches!(p.parameter_in, ParameterIn::Query | ParameterIn::Path))
            });
            if secured {
                add(
                    "401",
                    "No token, or one that is unknown, expired or revoked",
                );
                add(
                    "403",
                    "The token may not do this (a tenant's on an admin route, a read-only one on a write)",
                );
                add(
                    "503",
                    "The database took no query in time (overloaded, or locked past its timeout): \
                     nothing was changed; `Retry-After` says when to ask again",
                );
            }
            if has_body {
                add(
                    "400",
                    "The body is not JSON, or not sent as `application/json`",
                );
                add("413", "The body is larger than the limit");
                add("422", "A field of the body is wrong; `field` names it");
            }
            if has_params {
                add(
                    "422",
                    "A path or query parameter is wrong; `field` names it",
                );
            }
            if acts_on_host {
                add(
                    "409",
                    "The host's state does not allow this now (another operation holds it, it is \
                     being provisioned or released, it is in maintenance); `code` says which",
                );
            }
        }
    }
}

/// How the API's listener is set up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RouterOptions {
    pub(crate) metrics_access: MetricsAccess,
    /// Refuse every request that carries a bearer token: the listener is plain HTTP and not
    /// loopback, and the admin did not allow that.
    pub(crate) refuse_tokens_in_clear: bool,
}

/// The whole HTTP application.
pub(crate) fn router(podium: Podium, options: RouterOptions) -> Router {
    let http_metrics = metrics::HttpMetrics::registered(&podium);
    let (routes, openapi) = routes();
    let openapi = Arc::new(openapi);
    let routes = routes
        .merge(redfish::router())
        .merge(console::router())
        .merge(agent::router())
        .route(
            "/openapi.json",
            get(move || {
                let openapi = openapi.clone();
                async move { Json(openapi.as_ref().clone()) }
            }),
        )
        .route_layer(axum::middleware::from_fn(extract::refuse_nul_in_url))
        // Outside the NUL check, so that a write it refuses is recorded too.
        .route_layer(axum::middleware::from_fn_with_state(
            podium.clone(),
            audit::record,
        ))
        .route_layer(axum::middleware::from_fn_with_state(
            http_metrics,
            metrics::track,
        ))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::extract::DefaultBodyLimit::max(extract::MAX_JSON_BODY))
        .layer(tower_http::trace::TraceLayer::new_for_http().make_span_with(request_span))
        .layer(axum::Extension(options.metrics_access));
    let routes = if options.refuse_tokens_in_clear {
        routes.layer(axum::middleware::from_fn(refuse_token_in_clear))
    } else {
        routes
    };
    // Outermost, so that whatever answers without reading the body reads it first.
    routes
        .layer(axum::middleware::from_fn(extract::read_small_body))
        .with_state(podium)
}

/// Refuses a request that carries a bearer token over plain HTTP to a listener that is not
/// loopback: the token crossed the network readable by anyone on the path, and the answer says
/// so, so that the admin sets up TLS before the token is used again.
async fn refuse_token_in_clear(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let headers = request.headers();
    if !headers.contains_key(axum::http::header::AUTHORIZATION)
        && !headers.contains_key("x-auth-token")
    {
        return next.run(request).await;
    }
    (
        StatusCode::FORBIDDEN,
        Json(serde_json::json!({"error": {
            "code": podium_types::ErrorCode::InsecureTransport,
            "message": "this listener serves plain HTTP on an address that is not loopback, so \
                a bearer token sent to it crosses the network unencrypted; the request is \
                refused: serve TLS (podium serve --tls-cert FILE --tls-key FILE), or, where \
                the network is trusted, start podium serve with --allow-insecure-http",
            "field": "Authorization",
        }})),
    )
        .into_response()
}

/// The application of the plain-HTTP listener for BMCs (`--config-drive-listen`): config drive
/// downloads and the deploy agent's API, and nothing else.
pub(crate) fn config_drive_router(podium: Podium) -> Router {
    Router::new()
        .route(
            "/v1/config_drives/{name}",
            get(rendering::config_drive_download),
        )
        .merge(agent::router())
        .layer(axum::extract::DefaultBodyLimit::max(extract::MAX_JSON_BODY))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(extract::read_small_body))
        .with_state(podium)
}

/// The application of the listener the admin opened for scrapers: `/metrics`, with no token,
/// and nothing else.
pub(crate) fn metrics_router(podium: Podium) -> Router {
    Router::new()
        .route("/metrics", get(metrics::metrics_public))
        .fallback(not_found)
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

/// No route: the answer names the path the caller sent (still percent-encoded, clipped).
async fn not_found(uri: axum::http::Uri) -> Response {
    if redfish::is_redfish(uri.path()) {
        return redfish::not_found(&uri).into_response();
    }
    not_found_at(uri.path())
}

/// 404 for a path nothing serves, naming it (cut at 256 characters).
fn not_found_at(path: &str) -> Response {
    let path = match path.char_indices().nth(256) {
        Some((end, _)) => format!("{}...", &path[..end]),
        None => path.to_owned(),
    };
    ApiError(Error::NotFound {
        kind: "route",
        id: path,
    })
    .into_response()
}

async fn method_not_allowed(uri: axum::http::Uri) -> Response {
    if redfish::is_redfish(uri.path()) {
        return redfish::method_not_allowed().into_response();
    }
    (
        StatusCode::METHOD_NOT_ALLOWED,
        Json(
            serde_json::json!({"error": {"code": podium_types::ErrorCode::MethodNotAllowed, "message": "this method is not allowed on this path"}}),
        ),
    )
        .into_response()
}

#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(crate) struct Health {
    /// `ok` when the database answers.
    pub status: String,
}

/// Liveness: the process answers. No authentication, no database: for a liveness probe, which
/// must not restart Podium because its database is away (`/healthz` says that).
#[utoipa::path(get, path = "/livez", tag = "health", responses((status = 200, body = Health)))]
pub(crate) async fn livez() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
    })
}

/// Readiness: the process answers and its database does. No authentication.
#[utoipa::path(get, path = "/healthz", tag = "health",
    responses((status = 200, body = Health), (status = 503, body = ErrorBody)))]
pub(crate) async fn healthz(State(podium): State<Podium>) -> Result<Json<Health>, ApiError> {
    podium.ping().await?;
    Ok(Json(Health {
        status: "ok".into(),
    }))
}
