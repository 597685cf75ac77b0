//! What a driver reports of a system, in the form the store keeps.

use podium_runtime::{System, SystemKind};
use podium_store::HostRow;
use podium_types::HostId;

/// The stored form of a discovered system (the `id` is used only if the host is new).
pub(crate) fn host_row_from_system(s: &System) -> HostRow {
    HostRow {
        id: HostId::generate(),
        system_id: s.id.clone(),
        kind: match s.kind {
            SystemKind::System => "system",
            SystemKind::Chassis => "chassis",
        }
        .into(),
        name: s.name.clone(),
        uuid: s.uuid.clone(),
        manufacturer: s.manufacturer.clone(),
        model: s.model.clone(),
        serial: s.serial.clone(),
        cpu_count: i64::from(s.cpu_count),
        memory_mib: i64::try_from(s.memory_mib).unwrap_or(i64::MAX),
        nics: s.nics.clone(),
        media_slots: s.media_slots.clone(),
        boot: s.boot,
        power_state: power_state_name(s.power).into(),
        bmc_tls_verify: true,
        ..HostRow::default()
    }
}

pub(crate) fn power_state_name(p: podium_runtime::PowerState) -> &'static str {
    use podium_runtime::PowerState as P;
    match p {
        P::On => "on",
        P::Off => "off",
        P::PoweringOn => "powering_on",
        P::PoweringOff => "powering_off",
        P::Unknown => "unknown",
    }
}
