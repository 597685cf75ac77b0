//! What an operation found or did (its `result`, once it succeeded) and how far one that runs
//! is (its `progress`), a type per kind. The API shows them as they are written here; the store
//! keeps them as this JSON and reads them back by the operation's kind
//! ([`OperationResult::from_stored`]), as a client does (`OperationView`). What an earlier
//! release recorded reads back too: a field added since has a default, and a shape no type
//! reads is kept as it was ([`Unread`]), never an error that would hide a whole list.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::names::names;
use crate::requests::RootDeviceHints;
use crate::{
    BootTarget, ConfigDriveId, ImageFormat, OperationKind, PowerAction, PowerState, TaskState,
    Timestamp,
};

/// The schema of an untagged enum: any of its variants' shapes. (`oneOf`, what a derived
/// schema says, refuses a value that fits two shapes, and shapes whose fields may all be
/// absent fit many.)
macro_rules! any_of_schema {
    ($name:ident, $description:literal, [$($variant:ty),* $(,)?]) => {
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::AnyOfBuilder::new()
                    $(.item(utoipa::openapi::Ref::from_schema_name(
                        <$variant as utoipa::ToSchema>::name(),
                    )))*
                    .description(Some($description))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {
            fn schemas(
                schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>,
            ) {
                $(
                    schemas.push((
                        <$variant as utoipa::ToSchema>::name().into(),
                        <$variant as utoipa::PartialSchema>::schema(),
                    ));
                    <$variant as utoipa::ToSchema>::schemas(schemas);
                )*
            }
        }
    };
}
pub(crate) use any_of_schema;

/// What an operation found or did, by its kind.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OperationResult {
    /// `register`, `boot` and `media`: what the BMC reports after.
    Observed(Observed),
    Inspect(Inspected),
    Sync(SyncSummary),
    Power(PowerSent),
    Bios(BiosApplied),
    SecureBoot(SecureBootSet),
    FirmwareUpdate(FirmwareUpdated),
    Provision(Provisioned),
    Deprovision(Deprovisioned),
    Unread(Unread),
}

any_of_schema!(
    OperationResult,
    "What an operation found or did, a shape per kind.",
    [
        Observed,
        Inspected,
        SyncSummary,
        PowerSent,
        BiosApplied,
        SecureBootSet,
        FirmwareUpdated,
        Provisioned,
        Deprovisioned,
        Unread,
    ]
);

impl OperationResult {
    /// Reads back the result of an operation of `kind`, as the store or the API wrote it.
    pub fn read(kind: OperationKind, json: &serde_json::Value) -> serde_json::Result<Self> {
        fn from_value<'a, T: Deserialize<'a>>(
            json: &'a serde_json::Value,
        ) -> serde_json::Result<T> {
            T::deserialize(json)
        }
        Ok(match kind {
            OperationKind::Register | OperationKind::Boot | OperationKind::Media => {
                OperationResult::Observed(from_value(json)?)
            }
            OperationKind::Inspect => OperationResult::Inspect(from_value(json)?),
            OperationKind::Sync => OperationResult::Sync(from_value(json)?),
            OperationKind::Power => OperationResult::Power(from_value(json)?),
            OperationKind::Bios => OperationResult::Bios(from_value(json)?),
            OperationKind::SecureBoot => OperationResult::SecureBoot(from_value(json)?),
            OperationKind::FirmwareUpdate => OperationResult::FirmwareUpdate(from_value(json)?),
            OperationKind::Provision => OperationResult::Provision(from_value(json)?),
            OperationKind::Deprovision => OperationResult::Deprovision(from_value(json)?),
        })
    }

    /// Reads back a result of `kind` as [`read`](Self::read) does; one in a shape its kind's
    /// type does not read (an earlier release's) is kept as it was.
    pub fn from_stored(kind: OperationKind, json: serde_json::Value) -> Self {
        OperationResult::read(kind, &json).unwrap_or(OperationResult::Unread(Unread(json)))
    }
}

/// What an operation recorded in a shape this release does not read (an earlier release's),
/// kept and shown as it was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(value_type = Object)]
pub struct Unread(pub serde_json::Value);

/// How far an operation that runs is, by its kind: only a firmware update says.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(untagged)]
pub enum OperationProgress {
    FirmwareUpdate(FirmwareUpdateProgress),
    Unread(Unread),
}

impl OperationProgress {
    /// Reads back the progress of an operation of `kind`; `None` for a kind that records none.
    pub fn read(kind: OperationKind, json: &serde_json::Value) -> serde_json::Result<Option<Self>> {
        Ok(match kind {
            OperationKind::FirmwareUpdate => Some(OperationProgress::FirmwareUpdate(
                FirmwareUpdateProgress::deserialize(json)?,
            )),
            _ => None,
        })
    }

    /// Reads back the progress of an operation of `kind` as [`read`](Self::read) does; one in
    /// a shape its kind's type does not read is kept as it was.
    pub fn from_stored(kind: OperationKind, json: serde_json::Value) -> Option<Self> {
        OperationProgress::read(kind, &json)
            .unwrap_or(Some(OperationProgress::Unread(Unread(json))))
    }
}

/// What the BMC reports of the host after the operation, where it answered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct Observed {
    pub power_state: Option<PowerState>,
}

/// An inspection: the inventory read out of band, the DHCP-less preprovisioning prepared
/// (where the site has such pools) and the site's firmware profile given (where it has one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Inspected {
    pub inventory: InventoryRead,
    #[serde(default)]
    pub preprovisioning: Option<Preprovisioning>,
    #[serde(default)]
    pub firmware_profile: Option<ProfileApplied>,
}

/// The inventory an inspection read, in short (the host shows it whole).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct InventoryRead {
    pub cpu_count: u32,
    pub memory_mib: u64,
    /// The NICs' MAC addresses.
    pub nics: Vec<String>,
    /// The virtual media slots' ids.
    pub media_slots: Vec<String>,
    pub power_state: PowerState,
}

/// A host's DHCP-less preprovisioning: its address in each pool that preprovisions it, its
/// preprovisioning config drive, and the ramdisk booted with them, where the site has one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Preprovisioning {
    pub addresses: Vec<PreprovisioningAddress>,
    pub config_drive: ConfigDriveRef,
    /// The ramdisk's URL, where the host booted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booted: Option<String>,
}

/// An address a host holds in a pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PreprovisioningAddress {
    /// The pool's name.
    pub pool: String,
    pub address: String,
    pub prefix: u8,
    pub gateway: Option<String>,
}

/// A config drive an operation built.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ConfigDriveRef {
    pub id: ConfigDriveId,
    pub sha256: String,
    /// Bytes.
    pub size: i64,
    /// When its URL stops working (a preprovisioning drive's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
}

/// What giving the site's firmware profile changed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct ProfileApplied {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bios: Option<ProfileBios>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secure_boot: Option<ProfileSecureBoot>,
}

/// The BIOS attributes the profile changed: at once, or staged for the next reset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct ProfileBios {
    pub changed: Vec<String>,
    pub pending: Vec<String>,
}

/// Secure boot as the profile wants it, and whether it had to change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProfileSecureBoot {
    pub enabled: bool,
    pub changed: bool,
}

/// What a sync changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SyncSummary {
    /// Systems the pod manager reported.
    pub seen: usize,
    /// Hosts added for systems new to Podium.
    pub added: usize,
    /// Hosts marked `missing`: their systems were not reported.
    pub missing: usize,
}

/// A power action: what was sent to the BMC (an `off` sends a graceful shutdown first), and
/// the power state read back, where the BMC answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PowerSent {
    /// Empty in what releases before this field recorded.
    #[serde(default)]
    pub sent: Vec<PowerAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_state: Option<PowerState>,
}

/// A BIOS change or reset: the attributes the BMC shows changed, and those it staged for the
/// next reset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BiosApplied {
    /// The attributes changed at once (a change; a reset applies nothing at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<Vec<String>>,
    #[serde(default)]
    pub pending: Vec<String>,
}

/// Secure boot as the BMC shows it after the change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SecureBootSet {
    pub enabled: bool,
    /// Whether the boot running now was verified, where the BMC says.
    #[serde(default)]
    pub current_boot: Option<bool>,
}

/// A firmware update: the BMC's task and what it said, and each target's version before and
/// after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FirmwareUpdated {
    #[serde(default)]
    pub task: Option<String>,
    #[serde(default)]
    pub messages: Option<Vec<String>>,
    pub components: Vec<ComponentUpdated>,
}

/// A firmware component an update targeted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ComponentUpdated {
    pub id: String,
    /// Where the BMC still lists it.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub version_before: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
}

/// A provisioning: the image installed or booted, the disks cleaned first where another
/// claim's data was still on them, the config drive, and the power state after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Provisioned {
    #[serde(flatten)]
    pub how: ProvisionedBy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleaned_first: Option<DisksCleaned>,
    /// Why the disks were not cleaned first (cleaning is disabled on the pod manager).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_cleaned_first: Option<String>,
    pub config_drive: ConfigDriveRef,
    #[serde(default)]
    pub power_state: Option<PowerState>,
}

/// How the host got its system.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum ProvisionedBy {
    /// A `raw` or `qcow2` image, written to the disk by the deploy agent, then booted from it.
    Installed {
        installed: Box<Installed>,
        boot: BootTarget,
    },
    /// A live ISO (or an image of no format named), booted from virtual media.
    Booted {
        image: String,
        /// `on`, or `force_restart` for a host that was on.
        power: PowerAction,
    },
}

/// What the deploy agent wrote, and how long each step took.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Installed {
    pub image: String,
    pub format: ImageFormat,
    /// The hints the disk was chosen by (none: the agent's choice).
    #[serde(default)]
    pub root_device: RootDeviceHints,
    /// The agent was already running (no ramdisk booted for it).
    #[serde(default)]
    pub fast_track: bool,
    #[serde(default)]
    pub agent_ready_seconds: f64,
    #[serde(default)]
    pub write_seconds: f64,
    /// Flush, power off, eject, boot from disk, power on: the BMC's round trips (0 in what
    /// releases before this field recorded).
    #[serde(default)]
    pub reboot_seconds: f64,
    #[serde(default)]
    pub agent_result: AgentAnswer,
}

/// A release's deprovisioning: the disks cleaned where they may hold the tenant's data (or why
/// not), and why the boot override was kept, where the BMC refused to clear it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct Deprovisioned {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleaned: Option<DisksCleaned>,
    /// Why the disks were not cleaned (cleaning is disabled on the pod manager).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_cleaned: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_override_kept: Option<String>,
}

/// A cleaning of a host's disks by the deploy agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DisksCleaned {
    /// The agent's clean step: `erase_devices_metadata` or `erase_devices`.
    pub step: String,
    /// The agent was already running (no ramdisk booted for it).
    pub fast_track: bool,
    pub erase_seconds: f64,
    pub seconds: f64,
    #[serde(default)]
    pub agent_result: AgentAnswer,
}

/// What the deploy agent answered a command, as it sent it (IPA's `command_result`): Podium
/// keeps it for whoever reads the operation and reads nothing in it, so it stays the agent's
/// own document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(value_type = Object)]
pub struct AgentAnswer(pub serde_json::Value);

/// How far a firmware update is: the targets' versions before it, then, once the BMC took it,
/// when, its task and the task's state as last read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct FirmwareUpdateProgress {
    /// Set before the update is sent: a try after one that was stopped while sending never
    /// sends it again.
    pub started: bool,
    /// Each target's version before the update, where the BMC said.
    pub before: BTreeMap<String, Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// The BMC's task, where it answered one (none: the update ended as it was sent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<UpdateTaskState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<String>>,
    /// Why the last read of the task failed, while the update waits to read it again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

names! {
    /// A firmware update's task as last read: a task's state, or `gone` where the BMC no longer
    /// knows the task (it ended; the versions read after say how).
    pub enum UpdateTaskState ("an update task state") {
        Running => "running",
        Completed => "completed",
        Failed => "failed",
        Gone => "gone",
    }
}

impl From<TaskState> for UpdateTaskState {
    fn from(state: TaskState) -> UpdateTaskState {
        match state {
            TaskState::Running => UpdateTaskState::Running,
            TaskState::Completed => UpdateTaskState::Completed,
            TaskState::Failed => UpdateTaskState::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_reads_back_by_its_kind_as_it_was_written() {
        let provisioned = OperationResult::Provision(Provisioned {
            how: ProvisionedBy::Booted {
                image: "http://images.example/live.iso".into(),
                power: PowerAction::ForceRestart,
            },
            cleaned_first: None,
            not_cleaned_first: Some("cleaning is disabled".into()),
            config_drive: ConfigDriveRef {
                id: ConfigDriveId::generate(),
                sha256: "ab".repeat(32),
                size: 4096,
                expires_at: None,
            },
            power_state: Some(PowerState::On),
        });
        let json = serde_json::to_value(&provisioned).unwrap();
        assert_eq!(json["image"], "http://images.example/live.iso");
        assert_eq!(json["power"], "force_restart");
        assert!(json.get("cleaned_first").is_none(), "{json}");
        assert_eq!(
            OperationResult::read(OperationKind::Provision, &json).unwrap(),
            provisioned
        );
        let installed = serde_json::json!({
            "installed": {
                "image": "http://images.example/disk.qcow2", "format": "qcow2",
                "root_device": {}, "fast_track": false, "agent_ready_seconds": 1.5,
                "write_seconds": 2.0, "reboot_seconds": 0.5,
                "agent_result": {"deploy_result": null},
            },
            "boot": "hdd",
            "config_drive": {"id": ConfigDriveId::generate(), "sha256": "00", "size": 1},
            "power_state": null,
        });
        let read = OperationResult::read(OperationKind::Provision, &installed).unwrap();
        assert!(
            matches!(
                &read,
                OperationResult::Provision(Provisioned {
                    how: ProvisionedBy::Installed { .. },
                    ..
                })
            ),
            "{read:?}"
        );
        assert_eq!(serde_json::to_value(&read).unwrap(), installed);
    }

    #[test]
    fn what_earlier_releases_recorded_reads_back() {
        // A power action's result before `sent`.
        let power = serde_json::json!({"power_state": "on"});
        assert_eq!(
            OperationResult::from_stored(OperationKind::Power, power),
            OperationResult::Power(PowerSent {
                sent: Vec::new(),
                power_state: Some(PowerState::On),
            })
        );
        // A shape no type reads: kept as it was, and shown so.
        let odd = serde_json::json!({"inventory": 7});
        let read = OperationResult::from_stored(OperationKind::Inspect, odd.clone());
        assert_eq!(read, OperationResult::Unread(Unread(odd.clone())));
        assert_eq!(serde_json::to_value(&read).unwrap(), odd);
        assert!(OperationResult::read(OperationKind::Inspect, &odd).is_err());
        assert_eq!(
            OperationProgress::from_stored(OperationKind::FirmwareUpdate, serde_json::json!(1)),
            Some(OperationProgress::Unread(Unread(serde_json::json!(1))))
        );
        assert_eq!(
            OperationProgress::from_stored(OperationKind::Power, odd),
            None
        );
    }
}
