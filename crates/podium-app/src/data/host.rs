//! A host as the features work with it, and how the store keeps it: the row's columns for its
//! own BMC, its error and its maintenance become one optional value each.

use std::collections::BTreeMap;

use podium_store::HostRow;
use podium_types::{
    BootSettings, ClaimId, HostErrorKind, HostId, HostKind, HostState, MediaSlot, Nic,
    PodManagerId, PowerState, Timestamp,
};

use super::Datastore;
use crate::endpoint::{Bmc, Tls};
use crate::error::Error;

/// A machine behind a pod manager.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Host {
    pub(crate) id: HostId,
    pub(crate) pod_manager: PodManagerId,
    /// The system's id at its Redfish service.
    pub(crate) system_id: String,
    pub(crate) kind: HostKind,
    pub(crate) name: String,
    pub(crate) uuid: Option<String>,
    pub(crate) manufacturer: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) serial: Option<String>,
    pub(crate) cpu_count: i64,
    pub(crate) memory_mib: i64,
    pub(crate) nics: Vec<Nic>,
    pub(crate) media_slots: Vec<MediaSlot>,
    pub(crate) boot: Option<BootSettings>,
    pub(crate) power_state: PowerState,
    pub(crate) state: HostState,
    pub(crate) claim_id: Option<ClaimId>,
    pub(crate) labels: BTreeMap<String, String>,
    /// The host's own BMC, where it has one; `None` when its pod manager's service serves it.
    pub(crate) bmc: Option<Bmc>,
    /// The NIC the host boots from, as the admin set it; the first NIC when `None`.
    pub(crate) boot_mac: Option<String>,
    /// What put the host in `error` (kept after it recovers, shown only while it is in error).
    pub(crate) error: Option<HostError>,
    /// While `state` is `missing`: the state it returns to when it is seen again.
    pub(crate) missing_from: Option<HostState>,
    /// Set while the host is in maintenance.
    pub(crate) maintenance: Option<Maintenance>,
    /// The disk a disk image is written to when the claim names none, as the admin set it.
    pub(crate) root_device: Option<podium_types::requests::RootDeviceHints>,
    /// The chassis it stands in, outermost first; empty where its pod manager names none.
    pub(crate) chassis: Vec<podium_types::views::ChassisRef>,
    /// The BIOS's and the BMC's firmware versions as the last read of its firmware found them.
    pub(crate) bios_version: Option<String>,
    pub(crate) bmc_version: Option<String>,
    /// The claim whose data the disks may hold (written or booted for it, not cleaned since).
    pub(crate) disks_written_for: Option<ClaimId>,
    /// The last cleaning of its disks.
    pub(crate) last_cleaning: Option<podium_types::CleaningRecord>,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
    pub(crate) last_seen_at: Timestamp,
}

/// Why and when a host went to `error`, and the state the failure interrupted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HostError {
    pub(crate) kind: HostErrorKind,
    pub(crate) message: String,
    pub(crate) at: Option<Timestamp>,
    pub(crate) from: Option<HostState>,
}

/// An admin's maintenance of a host: since when, and why (possibly empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Maintenance {
    pub(crate) since: Timestamp,
    pub(crate) reason: String,
}

impl From<HostRow> for Host {
    fn from(r: HostRow) -> Host {
        let bmc = r.bmc_url.map(|url| Bmc {
            url,
            auth_sealed: r.bmc_auth_sealed,
            tls: Tls {
                verify: r.bmc_tls_verify,
                ca_bundle: r.bmc_tls_ca_bundle,
                pinned_sha256: r.bmc_tls_pinned_sha256,
            },
        });
        let error = r.error_type.map(|kind| HostError {
            kind,
            message: r.error_message.unwrap_or_default(),
            at: r.error_at,
            from: r.error_from,
        });
        let maintenance = r.maintenance_since.map(|since| Maintenance {
            since,
            reason: r.maintenance_reason.unwrap_or_default(),
        });
        Host {
            id: r.id,
            pod_manager: r.pod_manager,
            system_id: r.system_id,
            kind: r.kind,
            name: r.name,
            uuid: r.uuid,
            manufacturer: r.manufacturer,
            model: r.model,
            serial: r.serial,
            cpu_count: r.cpu_count,
            memory_mib: r.memory_mib,
            nics: r.nics,
            media_slots: r.media_slots,
            boot: r.boot,
            power_state: r.power_state,
            state: r.state,
            claim_id: r.claim_id,
            labels: r.labels,
            bmc,
            boot_mac: r.boot_mac,
            error,
            missing_from: r.missing_from,
            maintenance,
            root_device: r.root_device,
            chassis: r.chassis_path.unwrap_or_default(),
            bios_version: r.bios_version,
            bmc_version: r.bmc_version,
            disks_written_for: r.disks_written_for,
            last_cleaning: r.last_cleaning,
            created_at: r.created_at,
            updated_at: r.updated_at,
            last_seen_at: r.last_seen_at,
        }
    }
}

impl From<Host> for HostRow {
    fn from(h: Host) -> HostRow {
        let (bmc_url, bmc_auth_sealed, tls) = match h.bmc {
            Some(b) => (Some(b.url), b.auth_sealed, b.tls),
            None => (None, None, Tls::default()),
        };
        let (error_type, error_message, error_at, error_from) = match h.error {
            Some(e) => (Some(e.kind), Some(e.message), e.at, e.from),
            None => (None, None, None, None),
        };
        let (maintenance_since, maintenance_reason) = match h.maintenance {
            Some(m) => (Some(m.since), Some(m.reason)),
            None => (None, None),
        };
        HostRow {
            id: h.id,
            pod_manager: h.pod_manager,
            system_id: h.system_id,
            kind: h.kind,
            name: h.name,
            uuid: h.uuid,
            manufacturer: h.manufacturer,
            model: h.model,
            serial: h.serial,
            cpu_count: h.cpu_count,
            memory_mib: h.memory_mib,
            nics: h.nics,
            media_slots: h.media_slots,
            boot: h.boot,
            power_state: h.power_state,
            state: h.state,
            claim_id: h.claim_id,
            labels: h.labels,
            bmc_url,
            bmc_auth_sealed,
            bmc_tls_verify: tls.verify,
            bmc_tls_ca_bundle: tls.ca_bundle,
            bmc_tls_pinned_sha256: tls.pinned_sha256,
            boot_mac: h.boot_mac,
            error_type,
            error_message,
            error_at,
            error_from,
            missing_from: h.missing_from,
            maintenance_since,
            maintenance_reason,
            root_device: h.root_device,
            chassis_path: (!h.chassis.is_empty()).then_some(h.chassis),
            bios_version: h.bios_version,
            bmc_version: h.bmc_version,
            disks_written_for: h.disks_written_for,
            last_cleaning: h.last_cleaning,
            created_at: h.created_at,
            updated_at: h.updated_at,
            last_seen_at: h.last_seen_at,
        }
    }
}

/// A host, if there is one.
pub(crate) async fn host_find(store: &Datastore, id: &HostId) -> Result<Option<Host>, Error> {
    Ok(store.host_get(id).await?.map(Host::from))
}

/// A host by id, or `not_found`.
pub(crate) async fn host_load(store: &Datastore, id: &HostId) -> Result<Host, Error> {
    host_find(store, id)
        .await?
        .ok_or_else(|| Error::not_found("host", id))
}

/// The host an operation acts on.
pub(crate) async fn operation_host(
    store: &Datastore,
    op: &super::OperationRow,
) -> Result<Host, Error> {
    let Some(id) = &op.host_id else {
        return Err(Error::not_found("host", "(none)"));
    };
    host_find(store, id)
        .await?
        .ok_or_else(|| Error::not_found("host", id))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every column survives the trip row → host → row, with and without the optional parts.
    #[test]
    fn a_row_reads_back_as_it_was_written() {
        let bare = HostRow {
            bmc_tls_verify: true,
            ..HostRow::default()
        };
        let full = HostRow {
            bmc_url: Some("https://bmc.example:443".into()),
            bmc_auth_sealed: Some("sealed".into()),
            bmc_tls_verify: true,
            bmc_tls_pinned_sha256: Some("ab".repeat(32)),
            error_type: Some(HostErrorKind::Inspection),
            error_message: Some("the BMC said no".into()),
            error_at: Some(Timestamp::now()),
            error_from: Some(HostState::Inspecting),
            maintenance_since: Some(Timestamp::now()),
            maintenance_reason: Some("new DIMMs".into()),
            chassis_path: Some(vec![podium_types::views::ChassisRef {
                id: podium_types::ChassisId::generate(),
                name: "Rack 7".into(),
                chassis_type: "Rack".into(),
            }]),
            bios_version: Some("2.1.0".into()),
            bmc_version: Some("1.0.0".into()),
            disks_written_for: Some(ClaimId::generate()),
            last_cleaning: Some(podium_types::CleaningRecord {
                at: Timestamp::now(),
                cleaning: podium_types::Cleaning::Full,
                claim: Some(ClaimId::generate()),
                succeeded: false,
                message: Some("the agent said no".into()),
            }),
            ..HostRow::default()
        };
        for row in [bare, full] {
            assert_eq!(HostRow::from(Host::from(row.clone())), row);
        }
    }
}
