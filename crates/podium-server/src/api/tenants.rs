//! `/v1/tenants`, their tokens, admin tokens (admin only), and `/v1/me` (anyone authenticated).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use podium_types::{TenantId, TokenId};

use super::error::{ApiResult, ErrorBody};
use super::extract::{AdminCaller, AnyCaller, ApiJson, ApiQuery};
use podium_app::app::Podium;
use podium_types::requests::{TenantCreate, TenantDeleteQuery, TenantQuery, TokenCreate};
use podium_types::views::{
    List, MeView, TenantDeletionView, TenantView, TokenCreatedView, TokenView,
};

#[utoipa::path(post, path = "/v1/tenants", tag = "tenants", request_body = TenantCreate,
    responses((status = 201, body = TenantView), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn tenant_create(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiJson(params): ApiJson<TenantCreate>,
) -> ApiResult<(StatusCode, Json<TenantView>)> {
    let tenant = podium.tenant_create(&caller, params).await?;
    Ok((StatusCode::CREATED, Json(tenant)))
}

#[utoipa::path(get, path = "/v1/tenants", tag = "tenants", params(TenantQuery),
    responses((status = 200, body = List<TenantView>)),
    security(("bearer" = [])))]
pub(super) async fn tenant_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiQuery(q): ApiQuery<TenantQuery>,
) -> ApiResult<Json<List<TenantView>>> {
    let paged = podium
        .tenant_list(&caller, q.name.as_deref(), q.limit, q.cursor)
        .await?;
    Ok(Json(paged))
}

#[utoipa::path(get, path = "/v1/tenants/{id}", tag = "tenants", params(("id" = String, Path)),
    responses((status = 200, body = TenantView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn tenant_view(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<TenantId>,
) -> ApiResult<Json<TenantView>> {
    Ok(Json(podium.tenant_view(&caller, &id).await?))
}

/// Deletes a tenant and revokes its tokens.
/// Deletes a tenant. Refused (409) while it holds claims, unless `release=true`: then its
/// tokens are revoked and its grants dropped at once, its claims are released (their hosts
/// deprovisioned), and the tenant goes with the last of them (202 until then).
#[utoipa::path(delete, path = "/v1/tenants/{id}", tag = "tenants",
    params(("id" = String, Path), TenantDeleteQuery),
    responses((status = 204, description = "Deleted"),
        (status = 202, body = TenantDeletionView, description = "Releasing its claims; deleted after"),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn tenant_delete(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<TenantId>,
    ApiQuery(q): ApiQuery<TenantDeleteQuery>,
) -> ApiResult<axum::response::Response> {
    use axum::response::IntoResponse;
    let releasing = podium
        .tenant_delete(&caller, &id, q.release.unwrap_or(false))
        .await?;
    Ok(if releasing == 0 {
        StatusCode::NO_CONTENT.into_response()
    } else {
        (
            StatusCode::ACCEPTED,
            Json(TenantDeletionView {
                tenant: id,
                releasing_claims: releasing,
            }),
        )
            .into_response()
    })
}

/// Creates a bearer token for the tenant. The secret is in this answer only.
#[utoipa::path(post, path = "/v1/tenants/{id}/tokens", tag = "tenants", params(("id" = String, Path)),
    request_body = TokenCreate,
    responses((status = 201, body = TokenCreatedView), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn tenant_token_create(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<TenantId>,
    ApiJson(params): ApiJson<TokenCreate>,
) -> ApiResult<(StatusCode, Json<TokenCreatedView>)> {
    let token = podium.token_create(&caller, Some(&id), params).await?;
    Ok((StatusCode::CREATED, Json(token)))
}

/// The tenant's tokens, without their secrets.
#[utoipa::path(get, path = "/v1/tenants/{id}/tokens", tag = "tenants", params(("id" = String, Path)),
    responses((status = 200, body = List<TokenView>), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn tenant_token_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(id): Path<TenantId>,
) -> ApiResult<Json<List<TokenView>>> {
    Ok(Json(podium.token_list(&caller, Some(&id)).await?))
}

/// Revokes a tenant's token at once.
#[utoipa::path(delete, path = "/v1/tenants/{id}/tokens/{token_id}", tag = "tenants",
    params(("id" = String, Path), ("token_id" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn tenant_token_revoke(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path((id, token_id)): Path<(TenantId, TokenId)>,
) -> ApiResult<StatusCode> {
    podium.token_revoke(&caller, Some(&id), &token_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Creates an admin token. The secret is in this answer only.
#[utoipa::path(post, path = "/v1/admin/tokens", tag = "tenants", request_body = TokenCreate,
    responses((status = 201, body = TokenCreatedView), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn admin_token_create(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    ApiJson(params): ApiJson<TokenCreate>,
) -> ApiResult<(StatusCode, Json<TokenCreatedView>)> {
    let token = podium.token_create(&caller, None, params).await?;
    Ok((StatusCode::CREATED, Json(token)))
}

#[utoipa::path(get, path = "/v1/admin/tokens", tag = "tenants",
    responses((status = 200, body = List<TokenView>)),
    security(("bearer" = [])))]
pub(super) async fn admin_token_list(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
) -> ApiResult<Json<List<TokenView>>> {
    Ok(Json(podium.token_list(&caller, None).await?))
}

/// Revokes an admin token at once (the token used for this request included).
#[utoipa::path(delete, path = "/v1/admin/tokens/{token_id}", tag = "tenants",
    params(("token_id" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn admin_token_revoke(
    State(podium): State<Podium>,
    AdminCaller(caller): AdminCaller,
    Path(token_id): Path<TokenId>,
) -> ApiResult<StatusCode> {
    podium.token_revoke(&caller, None, &token_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Who the caller is: its role, tenant and whether its token is read-only.
#[utoipa::path(get, path = "/v1/me", tag = "tenants",
    responses((status = 200, body = MeView), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub(super) async fn me(
    State(podium): State<Podium>,
    AnyCaller(caller): AnyCaller,
) -> ApiResult<Json<MeView>> {
    Ok(Json(podium.me(&caller).await?))
}
