//! What a booted host reads, and config drives.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{ClaimId, ConfigDriveId, HostId, Phase};

/// The documents rendered for a host or a claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RenderedView {
    pub phase: Phase,
    pub host: HostId,
    pub claim: Option<ClaimId>,
    #[schema(value_type = Object)]
    pub meta_data: serde_json::Value,
    #[schema(value_type = Object)]
    pub network_data: serde_json::Value,
    pub has_user_data: bool,
}

/// A config drive: its URL is its only credential, answered once, here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ConfigDriveView {
    pub id: ConfigDriveId,
    pub url: String,
    pub phase: Phase,
    pub host: HostId,
    pub claim: Option<ClaimId>,
    pub expires_at: String,
    pub size: i64,
    pub sha256: String,
    pub media_types: Vec<String>,
}
