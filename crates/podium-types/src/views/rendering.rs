//! What a booted host reads, and config drives.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{ClaimId, ConfigDriveId, HostId, Phase};

/// What a host reads when it boots in one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RenderedView {
    pub phase: Phase,
    pub host: HostId,
    pub claim: Option<ClaimId>,
    /// `meta_data.json`.
    #[schema(value_type = Object)]
    pub meta_data: serde_json::Value,
    /// `network_data.json`.
    #[schema(value_type = Object)]
    pub network_data: serde_json::Value,
    /// Whether the config drive carries `user_data` (never shown here).
    pub has_user_data: bool,
    /// Present on an admin's preview: phase `provisioning` of a host no claim is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<PreviewView>,
}

/// What a preview leaves out: the documents are the site's template rendered for the host,
/// with no address allocated and nothing of a claim's own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PreviewView {
    pub message: String,
    /// The addresses that stand in for those a claim will be given, one per pool the template
    /// takes addresses from; none of them is held.
    pub unallocated: Vec<UnallocatedView>,
}

/// An address a claim has not been given yet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UnallocatedView {
    /// The IP pool it will come from.
    pub pool: String,
    /// What stands in for it in the documents: the pool's network address.
    pub stand_in: String,
}

/// A config drive just made. `url` is shown once: it is the only credential the download needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ConfigDriveView {
    pub id: ConfigDriveId,
    pub url: String,
    pub phase: Phase,
    pub host: HostId,
    pub claim: Option<ClaimId>,
    pub expires_at: crate::Timestamp,
    pub size: i64,
    pub sha256: String,
    /// A VFAT image labelled `config-2`: insert it as one of these media types.
    pub media_types: Vec<String>,
}
