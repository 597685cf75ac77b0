//! The audit log: who asked for which change, and how it ended.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{Role, TenantId, TokenId};

/// One authenticated request that asked for a change (`POST`, `PUT`, `PATCH`, `DELETE`),
/// refused or not. It holds no body: nothing secret is ever in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditEventView {
    /// Ordered by time: a later event has a greater id.
    pub id: String,
    /// When the answer was given (RFC 3339, UTC).
    pub at: crate::Timestamp,
    /// The token the request carried (its id; never the token).
    pub token_id: TokenId,
    pub role: Role,
    /// The token's tenant, for a tenant's token.
    pub tenant: Option<TenantId>,
    pub method: String,
    /// The route's template (`/v1/hosts/{id}/power`).
    pub route: String,
    /// The path as sent, with its ids (a config drive's token never: no such route writes).
    pub path: String,
    /// The resource the request created (from the answer) or else the last one its path names.
    pub resource: Option<String>,
    /// The HTTP status of the answer.
    pub status: u16,
    /// `succeeded` (a 2xx or 3xx) or `failed`.
    pub outcome: String,
    /// The error's `code`, when it failed.
    pub error_code: Option<String>,
}
