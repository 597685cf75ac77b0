//! What a driver reports of a system or a chassis, in the form the store keeps.

use podium_runtime::{Chassis, Health, System};
use podium_store::{ChassisReport, HostRow};
use podium_types::{HostId, HostKind};

/// The stored form of a discovered system (the `id` is used only if the host is new).
///
/// Always a system: a host comes only from a system (a sync and a registration keep no chassis
/// a driver reports), and a later read of it that says chassis (contract 0.1.0 lets a driver
/// say so) does not make it one.
pub(crate) fn host_from_system(s: &System) -> HostRow {
    HostRow {
        id: HostId::generate(),
        system_id: s.id.clone(),
        kind: HostKind::System,
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
        power_state: s.power,
        bmc_tls_verify: true,
        ..HostRow::default()
    }
}

/// The stored form of a reported chassis.
pub(crate) fn chassis_from_driver(c: &Chassis) -> ChassisReport {
    ChassisReport {
        chassis_id: c.id.clone(),
        name: c.name.clone(),
        chassis_type: c.chassis_type.dmtf_name().to_owned(),
        manufacturer: c.manufacturer.clone(),
        model: c.model.clone(),
        serial: c.serial.clone(),
        location: c.location.clone(),
        power_state: c.power,
        health: c.health.map(|h| match h {
            Health::Ok => podium_types::ComponentHealth::Ok,
            Health::Warning => podium_types::ComponentHealth::Warning,
            Health::Critical => podium_types::ComponentHealth::Critical,
        }),
        parent: c.contained_by.clone(),
        systems: c.systems.clone(),
    }
}
