//! Tenants, their tokens and grants, and who a token is.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{GrantId, PodManagerId, Role, TenantId, TokenId};

/// A tenant: a consumer of hosts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TenantView {
    pub id: TenantId,
    pub name: String,
    pub description: String,
    pub created_at: crate::Timestamp,
}

/// A token, without its secret.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TokenView {
    pub id: TokenId,
    pub role: Role,
    pub tenant: Option<TenantId>,
    pub read_only: bool,
    pub description: String,
    pub expires_at: Option<crate::Timestamp>,
    pub created_at: crate::Timestamp,
    pub revoked_at: Option<crate::Timestamp>,
}

/// A new token: the only answer that carries its secret.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TokenCreatedView {
    /// The bearer token. Shown once; Podium keeps only its hash.
    pub token: String,
    #[serde(flatten)]
    pub view: TokenView,
}

/// A tenant whose claims are being released before it is deleted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TenantDeletionView {
    pub tenant: TenantId,
    pub releasing_claims: usize,
}

/// Who the token belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct MeView {
    pub role: Role,
    pub tenant: Option<TenantId>,
    /// The tenant's name, for a tenant's token.
    pub tenant_name: Option<String>,
    pub read_only: bool,
    pub token_id: TokenId,
}

/// A tenant's right to claim hosts of a pod manager.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GrantView {
    pub id: GrantId,
    pub tenant: TenantId,
    pub pod_manager: PodManagerId,
    /// Labels a host must all carry; every host of the pod manager when empty.
    pub selector: BTreeMap<String, String>,
    /// At most this many hosts at once; `null` for no limit.
    pub max_hosts: Option<i64>,
    /// Only the hosts of this chassis and of the chassis within it; `null`: every host.
    pub chassis: Option<crate::ChassisId>,
    pub created_at: crate::Timestamp,
}
