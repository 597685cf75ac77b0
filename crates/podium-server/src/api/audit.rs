//! The audit log over HTTP: the layer that records every authenticated request asking for a
//! change once it is answered, and `GET /v1/audit`.

use axum::Json;
use axum::body::{Body, HttpBody as _};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::Response;

use super::error::ApiResult;
use super::extract::{AnyCaller, ApiQuery};
use podium_app::app::{Podium, page};
use podium_app::audit::AuditEntry;
use podium_types::AuditFilter;
use podium_types::requests::AuditQuery;
use podium_types::views::{AuditEventView, List};

/// The most of an answer read for the id it created or the code of its error.
const ANSWER_READ_MAX: u64 = 1 << 20;

/// Records a routed request that asks for a change, with what its answer says (a route layer:
/// the route's template is known).
pub(crate) async fn record(State(podium): State<Podium>, request: Request, next: Next) -> Response {
    if matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) {
        return next.run(request).await;
    }
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    // Who asks is read before the request runs: a request that revokes its own token is
    // still its token's. No valid token: nobody to record, and nothing changed.
    let caller = if super::redfish::is_redfish(request.uri().path()) {
        super::redfish::caller_of(&podium, request.headers()).await
    } else {
        podium.authenticate(authorization.as_deref()).await.ok()
    };
    let Some(caller) = caller else {
        return next.run(request).await;
    };
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| path.clone(), |m| m.as_str().to_owned());
    let response = next.run(request).await;
    let status = response.status();
    // What the answer says: the id it created, the code of its error. Read only where it is a
    // small JSON body of known length, so nothing is ever held back from the caller.
    let (parts, body) = response.into_parts();
    let small_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"application/json"))
        && body
            .size_hint()
            .exact()
            .is_some_and(|n| n <= ANSWER_READ_MAX);
    let (answer, body) = if small_json {
        match axum::body::to_bytes(body, ANSWER_READ_MAX as usize).await {
            Ok(bytes) => (
                serde_json::from_slice::<serde_json::Value>(&bytes).ok(),
                Body::from(bytes),
            ),
            Err(_) => (None, Body::empty()),
        }
    } else {
        (None, body)
    };
    let created = (status.as_u16() == 201 || status.as_u16() == 202)
        .then_some(answer.as_ref())
        .flatten()
        .and_then(|a| a.get("id").or_else(|| a.get("uuid")))
        .and_then(|id| id.as_str())
        .map(str::to_owned);
    let error_code = (status.is_client_error() || status.is_server_error())
        .then_some(answer.as_ref())
        .flatten()
        .and_then(|a| a["error"]["code"].as_str())
        .map(str::to_owned);
    let entry = AuditEntry {
        resource: created.or_else(|| last_parameter(&route, &path)),
        method,
        route,
        path,
        status: status.as_u16(),
        error_code,
    };
    podium.audit_record(&caller, entry).await;
    Response::from_parts(parts, body)
}

/// The value of the last path parameter of `route` (`/v1/hosts/{id}/power`) in `path`.
fn last_parameter(route: &str, path: &str) -> Option<String> {
    route
        .split('/')
        .zip(path.split('/'))
        .filter(|(template, _)| template.starts_with('{'))
        .map(|(_, value)| value)
        .last()
        .map(str::to_owned)
}

/// The audit log, newest first: every authenticated request that asked for a change (`POST`,
/// `PUT`, `PATCH`, `DELETE`), refused or not, with who made it and how it ended. An admin's
/// token reads every event (read-only will do); a tenant's reads its own.
#[utoipa::path(get, path = "/v1/audit", tag = "admin", params(AuditQuery),
    responses((status = 200, body = List<AuditEventView>)),
    security(("bearer" = [])))]
pub(super) async fn audit_list(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> ApiResult<Json<List<AuditEventView>>> {
    let filter = AuditFilter {
        tenant: q.tenant,
        resource: q.resource,
        since: q.since,
        until: q.until,
    };
    Ok(Json(
        podium
            .audit_list(&caller, filter, page(q.limit, q.cursor)?)
            .await?,
    ))
}
