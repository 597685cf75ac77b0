//! Composition (DMTF's `CompositionService`): the resource blocks behind a pod manager, and the
//! nodes Podium composed of them.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{HostId, HostState, PodManagerId, Timestamp};

/// A node Podium composed of a pod manager's resource blocks: a host of kind `composed`
/// (`GET /v1/hosts/{id}` with the same id), claimable as any host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ComposedNodeView {
    /// Its host's id.
    pub id: HostId,
    pub pod_manager: PodManagerId,
    pub name: String,
    /// The driver's id of the composed system (for Redfish, its `@odata.id`).
    pub system_id: String,
    /// Its host's state: `registering`, then `inspecting`, then `available`.
    pub state: HostState,
    /// The resource zone its blocks share.
    pub zone: String,
    /// The resource blocks it is composed of, by the driver's ids.
    pub blocks: Vec<String>,
    /// The claim it was composed for (`compose: true`): only that claim binds it, and it is
    /// decomposed once that claim holds another host or is released.
    pub claim: Option<crate::ClaimId>,
    pub created_at: Timestamp,
}

/// A pod manager's composition service, as its driver reads it now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CompositionView {
    pub blocks: Vec<ResourceBlockView>,
    pub zones: Vec<ResourceZoneView>,
    /// The zones a node may be composed in: every block of a node is in one of them.
    pub offered_zones: Vec<String>,
    /// How many blocks of each type one node takes.
    pub limits: Vec<BlockLimitView>,
}

/// A resource block: processors, memory, drives or NICs a node may be composed of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ResourceBlockView {
    /// The driver's id (for Redfish, its `@odata.id`).
    pub id: String,
    pub name: String,
    /// DMTF's `ResourceBlockType` names.
    pub block_types: Vec<crate::BlockType>,
    /// DMTF's `CompositionState`.
    pub state: crate::CompositionState,
    /// Reserved by a client of the service: not to be composed.
    pub reserved: bool,
    /// How many nodes it may be composed into at once, and is now.
    pub max_compositions: u32,
    pub compositions: u32,
    /// The zones it is in, by id.
    pub zones: Vec<String>,
    pub processors: u32,
    pub cores: u32,
    pub memory_mib: u64,
    pub drives: u32,
    pub drive_bytes: u64,
    pub nics: u32,
    /// The systems it is composed into, by the driver's ids.
    pub systems: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ResourceZoneView {
    pub id: String,
    pub name: String,
}

/// At least `min` and at most `max` blocks of `block_type` in one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct BlockLimitView {
    pub block_type: crate::BlockType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
}
