//! Firmware as Podium shows and updates it: a host's components (its BIOS, its BMC, its NICs, as
//! the BMC reports them) and an update from an image, run by the BMC as a task Podium follows.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::names::names;

names! {
    /// What a firmware component belongs to, as far as the BMC says.
    pub enum FirmwareKind ("a firmware component kind") {
        Bios => "bios",
        Bmc => "bmc",
        Nic => "nic",
        Other => "other",
    }
}

/// One firmware component of a host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FirmwareComponent {
    /// What an update's `targets` name (for Redfish, the resource `SimpleUpdate` targets).
    pub id: String,
    pub name: String,
    pub kind: FirmwareKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Whether the BMC says it can be updated.
    pub updateable: bool,
}

/// A host's firmware, as its BMC reports it now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Firmware {
    pub components: Vec<FirmwareComponent>,
}

/// A firmware update: the image the BMC downloads, and the components it is for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FirmwareUpdate {
    /// An http or https URL the BMC can fetch without credentials (the request is kept and
    /// shown in the operation).
    pub image_url: String,
    /// The components to update, by their `id`; at least one, each one the BMC says is
    /// updateable.
    pub targets: Vec<String>,
}

names! {
    /// Where the BMC's task for an update stands.
    pub enum TaskState ("a task state") {
        Running => "running",
        Completed => "completed",
        Failed => "failed",
    }
}

/// How far the BMC's task for an update is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TaskStatus {
    pub state: TaskState,
    /// Percent done, where the BMC says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<u8>,
    /// What the BMC says of it, oldest first.
    #[serde(default)]
    pub messages: Vec<String>,
}
