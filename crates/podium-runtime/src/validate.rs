//! What a hardware driver reports, checked in one place before the host keeps any of it. Every
//! field of a kind follows the same rule, whichever record it is in:
//!
//! | kind | fields | rule |
//! |---|---|---|
//! | id | system `id`, NIC `id`, media slot `id` | 1 to 512 bytes, no control or invisible character |
//! | text | `name`, `manufacturer`, `model`, `serial`, NIC `name`, slot `image` | at most 256 bytes (an image URL 2048), no control or invisible character |
//! | uuid | `uuid` | a UUID (any case, with or without hyphens), kept lower-case hyphenated |
//! | MAC | NIC `mac` | six octets (`:`, `-`, `.` or no separator), unicast, not all zeros; kept as `aa:bb:cc:dd:ee:ff`; each MAC once in one answer |
//! | count | `cpu-count`, `memory-mib` | at most 1,048,576 CPUs and 2^32 MiB (4 PiB) |
//! | list | systems, a system's NICs, its media slots | at most 100,000, 1,024, 64; ids unique within the list |
//! | composition | `read-composition`'s answer | at most 100,000 blocks and 10,000 zones, ids unique; every zone a block is in, or offered, listed; a block's systems each once |
//! | BIOS | `read-bios`'s answer | attribute names 1 to 256 ASCII letters, digits, `_`, `-`, `.`, each once in a list; text values at most 4096 bytes, text; at most 10,000 attributes, pending values and registry entries each, 1,024 allowed values of an entry (each text); a password's value (by the registry's type, or a name saying `password`, `passwd`, `pwd`, `secret`) dropped |
//! | inventory | `read-hardware`'s answer | at most 4,096 processors, memory modules, storage controllers, drives of one, NICs, ids unique in each list; their strings text; a NIC's `mac` a MAC (not checked for uniqueness: a VLAN repeats its NIC's) |
//! | firmware | `read-firmware`'s answer | at most 1,024 components, ids unique; `name` and `version` text |
//! | task | `update-firmware`'s and `read-task`'s answers | a task reference an id; `percent` at most 100; at most 64 messages, each text |
//! | chassis | `discover-chassis`'s answer | at most 100,000 chassis (ids unique), each in a chassis of the same answer or in none, no loop; at most 100,000 systems in one, each once; `location` and an `other` type are text |
//!
//! "Invisible" are the characters that change how text reads without showing: bidirectional
//! overrides, zero-width characters ([`podium_types::text::is_invisible`]). The first problem found
//! is the reason the call fails, naming the field (`systems[3].nics[0].mac`).

use std::collections::{BTreeMap, HashSet};

use podium_types::{
    ApplyTime, Bios, BiosAttributeEntry, BiosAttributeType, BiosValue, Drive, FirmwareComponent,
    FirmwareKind, HardwareInventory, LinkState, MemoryModule, NicLink, Processor, SecureBoot,
    StorageController, TaskState, TaskStatus,
};

use super::bindings::wit_components as wc;
use super::bindings::wit_composition as wk;
use super::bindings::wit_driver as wd;
use super::bindings::wit_firmware as wf;
use super::bindings::wit_inventory as wi;
use super::bindings::wit_settings as ws;
use super::system::{
    BlockLimit, BlockType, Chassis, ChassisType, CompositionService, CompositionState, Health,
    MediaSlot, Nic, ResourceBlock, ResourceZone, System, SystemKind,
};
use super::text::{is_plain, plugin_text};

const MAX_SYSTEMS: usize = 100_000;
const MAX_NICS: usize = 1024;
const MAX_SLOTS: usize = 64;
const MAX_ID: usize = 512;
const MAX_TEXT: usize = 256;
const MAX_IMAGE: usize = 2048;
const MAX_CPUS: u32 = 1 << 20;
const MAX_MEMORY_MIB: u64 = 1 << 32;

/// `value`, shown in a reason: escaped and clipped.
fn shown(value: &str) -> String {
    plugin_text(value, 64)
}

fn id(at: &str, value: &str) -> Result<(), String> {
    if value.is_empty() || value.len() > MAX_ID || !value.chars().all(is_plain) {
        return Err(format!(
            "{at} `{}` must be 1 to {MAX_ID} bytes with no control or invisible character",
            shown(value)
        ));
    }
    Ok(())
}

/// A system id a call answered on its own (`compose`'s), held to the rule of ids.
pub(super) fn system_id(at: &str, value: &str) -> Result<(), String> {
    id(at, value)
}

/// An [`id`] that `seen` (the ids of its list so far) does not hold yet.
fn unique_id(at: &str, value: &str, seen: &mut HashSet<String>) -> Result<(), String> {
    id(at, value)?;
    if !seen.insert(value.to_owned()) {
        return Err(format!("{at} `{}` is reported twice", shown(value)));
    }
    Ok(())
}

fn text(at: &str, value: &str, max: usize) -> Result<(), String> {
    if value.len() > max || !value.chars().all(is_plain) {
        return Err(format!(
            "{at} `{}` must be at most {max} bytes with no control or invisible character",
            shown(value)
        ));
    }
    Ok(())
}

fn uuid(at: &str, value: &str) -> Result<String, String> {
    uuid::Uuid::try_parse(value)
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| format!("{at} `{}` is not a UUID", shown(value)))
}

/// `52:54:00:AA:00:01`, `52-54-00-aa-00-01` and `525400aa0001` all become `52:54:00:aa:00:01`.
pub(super) fn normalise_mac(mac: &str) -> Option<String> {
    let hex: String = mac
        .chars()
        .filter(|c| !matches!(c, ':' | '-' | '.'))
        .collect();
    if hex.len() != 12 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let hex = hex.to_ascii_lowercase();
    Some(
        (0..6)
            .map(|i| &hex[i * 2..i * 2 + 2])
            .collect::<Vec<_>>()
            .join(":"),
    )
}

fn mac(at: &str, value: &str) -> Result<String, String> {
    let mac = normalise_mac(value)
        .ok_or_else(|| format!("{at}: `{}` is not a MAC address", shown(value)))?;
    let first = u8::from_str_radix(&mac[..2], 16).expect("two hex digits");
    if mac == "00:00:00:00:00:00" {
        return Err(format!("{at}: `{mac}` is the all-zero MAC address"));
    }
    if first & 1 == 1 {
        return Err(format!(
            "{at}: `{mac}` is a multicast or broadcast address, not a NIC's"
        ));
    }
    Ok(mac)
}

/// Checks what `discover` (or, as one system, `inspect`) returned.
pub(super) fn systems(systems: Vec<wd::System>) -> Result<Vec<System>, String> {
    if systems.len() > MAX_SYSTEMS {
        return Err(format!(
            "{} systems, more than the limit of {MAX_SYSTEMS}",
            systems.len()
        ));
    }
    let mut ids = HashSet::new();
    let mut macs = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(systems.len());
    for (i, s) in systems.into_iter().enumerate() {
        let at = |field: &str| format!("systems[{i}].{field}");
        unique_id(&at("id"), &s.id, &mut ids)?;
        text(&at("name"), &s.name, MAX_TEXT)?;
        for (field, value) in [
            ("manufacturer", &s.manufacturer),
            ("model", &s.model),
            ("serial", &s.serial),
        ] {
            if let Some(v) = value {
                text(&at(field), v, MAX_TEXT)?;
            }
        }
        let uuid = s
            .uuid
            .as_deref()
            .map(|u| uuid(&at("uuid"), u))
            .transpose()?;
        if s.cpu_count > MAX_CPUS {
            return Err(format!(
                "{} {} is more than {MAX_CPUS}",
                at("cpu-count"),
                s.cpu_count
            ));
        }
        if s.memory_mib > MAX_MEMORY_MIB {
            return Err(format!(
                "{} {} is more than {MAX_MEMORY_MIB}",
                at("memory-mib"),
                s.memory_mib
            ));
        }
        if s.nics.len() > MAX_NICS {
            return Err(format!(
                "{} holds {} NICs, more than {MAX_NICS}",
                at("nics"),
                s.nics.len()
            ));
        }
        if s.media_slots.len() > MAX_SLOTS {
            return Err(format!(
                "{} holds {} media slots, more than {MAX_SLOTS}",
                at("media-slots"),
                s.media_slots.len()
            ));
        }
        let mut nic_ids = HashSet::new();
        let mut nics = Vec::with_capacity(s.nics.len());
        for (j, n) in s.nics.into_iter().enumerate() {
            let at = |field: &str| at(&format!("nics[{j}].{field}"));
            unique_id(&at("id"), &n.id, &mut nic_ids)?;
            if let Some(name) = &n.name {
                text(&at("name"), name, MAX_TEXT)?;
            }
            let mac = mac(&at("mac"), &n.mac)?;
            if let Some(first) = macs.insert(mac.clone(), at("mac")) {
                return Err(format!("{} `{mac}` is also {first}", at("mac")));
            }
            nics.push(Nic {
                id: n.id,
                name: n.name,
                mac,
                speed_mbps: n.speed_mbps,
            });
        }
        let mut slot_ids = HashSet::new();
        let mut media_slots = Vec::with_capacity(s.media_slots.len());
        for (j, m) in s.media_slots.into_iter().enumerate() {
            let at = |field: &str| at(&format!("media-slots[{j}].{field}"));
            unique_id(&at("id"), &m.id, &mut slot_ids)?;
            if let Some(image) = &m.image {
                text(&at("image"), image, MAX_IMAGE)?;
            }
            media_slots.push(MediaSlot {
                id: m.id,
                media_types: m.media_types.into_iter().map(Into::into).collect(),
                inserted: m.inserted,
                image: m.image,
            });
        }
        out.push(System {
            id: s.id,
            kind: match s.kind {
                wd::SystemKind::System => SystemKind::System,
                wd::SystemKind::Chassis => SystemKind::Chassis,
            },
            name: s.name,
            uuid,
            manufacturer: s.manufacturer,
            model: s.model,
            serial: s.serial,
            cpu_count: s.cpu_count,
            memory_mib: s.memory_mib,
            nics,
            power: s.power.into(),
            boot: s.boot.map(Into::into),
            media_slots,
        });
    }
    Ok(out)
}

const MAX_CHASSIS: usize = 100_000;

/// Checks what `discover-chassis` returned: each chassis as a system's fields are checked, and
/// the tree: `contained-by` names another chassis of the answer, and following it from any
/// chassis ends at the top (no loop).
pub(super) fn chassis(chassis: Vec<wc::Chassis>) -> Result<Vec<Chassis>, String> {
    if chassis.len() > MAX_CHASSIS {
        return Err(format!(
            "{} chassis, more than the limit of {MAX_CHASSIS}",
            chassis.len()
        ));
    }
    let mut ids = HashSet::new();
    let mut out = Vec::with_capacity(chassis.len());
    for (i, c) in chassis.into_iter().enumerate() {
        let at = |field: &str| format!("chassis[{i}].{field}");
        unique_id(&at("id"), &c.id, &mut ids)?;
        text(&at("name"), &c.name, MAX_TEXT)?;
        for (field, value) in [
            ("manufacturer", &c.manufacturer),
            ("model", &c.model),
            ("serial", &c.serial),
            ("location", &c.location),
        ] {
            if let Some(v) = value {
                text(&at(field), v, MAX_TEXT)?;
            }
        }
        if let Some(parent) = &c.contained_by {
            id(&at("contained-by"), parent)?;
        }
        if c.systems.len() > MAX_SYSTEMS {
            return Err(format!(
                "{} holds {} systems, more than {MAX_SYSTEMS}",
                at("systems"),
                c.systems.len()
            ));
        }
        let mut system_ids = HashSet::new();
        for (j, system) in c.systems.iter().enumerate() {
            unique_id(&at(&format!("systems[{j}]")), system, &mut system_ids)?;
        }
        let chassis_type = match c.chassis_type {
            wc::ChassisType::Rack => ChassisType::Rack,
            wc::ChassisType::RackGroup => ChassisType::RackGroup,
            wc::ChassisType::Enclosure => ChassisType::Enclosure,
            wc::ChassisType::Blade => ChassisType::Blade,
            wc::ChassisType::Sled => ChassisType::Sled,
            wc::ChassisType::RackMount => ChassisType::RackMount,
            wc::ChassisType::StandAlone => ChassisType::StandAlone,
            wc::ChassisType::Drawer => ChassisType::Drawer,
            wc::ChassisType::Module => ChassisType::Module,
            wc::ChassisType::Zone => ChassisType::Zone,
            wc::ChassisType::Other(name) => {
                if name.is_empty() {
                    return Err(format!("{} is empty", at("chassis-type")));
                }
                text(&at("chassis-type"), &name, MAX_TEXT)?;
                ChassisType::Other(name)
            }
        };
        out.push(Chassis {
            id: c.id,
            name: c.name,
            chassis_type,
            manufacturer: c.manufacturer,
            model: c.model,
            serial: c.serial,
            location: c.location,
            power: c.power.map(Into::into),
            health: c.health.map(|h| match h {
                wc::Health::Ok => Health::Ok,
                wc::Health::Warning => Health::Warning,
                wc::Health::Critical => Health::Critical,
            }),
            contained_by: c.contained_by,
            systems: c.systems,
        });
    }
    // The tree: every parent is in the answer, and no chassis is its own ancestor. Each chassis
    // is walked up once: a walk stops at a chassis already known to reach the top, and one
    // that meets a chassis of its own walk found a loop.
    let index: std::collections::HashMap<&str, usize> = out
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    // 0: not walked yet; 1: on the walk under way; 2: reaches the top.
    let mut state = vec![0u8; out.len()];
    for start in 0..out.len() {
        let mut path = Vec::new();
        let mut at = start;
        while state[at] != 2 {
            if state[at] == 1 {
                return Err(format!(
                    "chassis[{at}].contained-by: `{}` is in itself, through {} chassis",
                    shown(&out[at].id),
                    path.len()
                ));
            }
            state[at] = 1;
            path.push(at);
            match out[at].contained_by.as_deref() {
                None => break,
                Some(parent) => match index.get(parent) {
                    Some(&p) => at = p,
                    None => {
                        return Err(format!(
                            "chassis[{at}].contained-by `{}` is no chassis of this answer",
                            shown(parent)
                        ));
                    }
                },
            }
        }
        for i in path {
            state[i] = 2;
        }
    }
    Ok(out)
}

const MAX_BLOCKS: usize = 100_000;
const MAX_ZONES: usize = 10_000;

/// Checks what `read-composition` returned.
pub(super) fn composition(service: wk::CompositionService) -> Result<CompositionService, String> {
    if service.blocks.len() > MAX_BLOCKS {
        return Err(format!(
            "{} resource blocks, more than the limit of {MAX_BLOCKS}",
            service.blocks.len()
        ));
    }
    if service.zones.len() > MAX_ZONES {
        return Err(format!(
            "{} resource zones, more than the limit of {MAX_ZONES}",
            service.zones.len()
        ));
    }
    let mut zone_ids = HashSet::new();
    let mut zones = Vec::with_capacity(service.zones.len());
    for (i, z) in service.zones.into_iter().enumerate() {
        unique_id(&format!("zones[{i}].id"), &z.id, &mut zone_ids)?;
        text(&format!("zones[{i}].name"), &z.name, MAX_TEXT)?;
        zones.push(ResourceZone {
            id: z.id,
            name: z.name,
        });
    }
    let listed = |at: String, zone: &str| -> Result<(), String> {
        if zone_ids.contains(zone) {
            Ok(())
        } else {
            Err(format!("{at} `{}` is no zone of this answer", shown(zone)))
        }
    };
    for (i, zone) in service.offered_zones.iter().enumerate() {
        listed(format!("offered-zones[{i}]"), zone)?;
    }
    let mut ids = HashSet::new();
    let mut blocks = Vec::with_capacity(service.blocks.len());
    for (i, b) in service.blocks.into_iter().enumerate() {
        let at = |field: &str| format!("blocks[{i}].{field}");
        unique_id(&at("id"), &b.id, &mut ids)?;
        text(&at("name"), &b.name, MAX_TEXT)?;
        for (j, zone) in b.zones.iter().enumerate() {
            listed(at(&format!("zones[{j}]")), zone)?;
        }
        if b.systems.len() > MAX_SYSTEMS {
            return Err(format!("{} lists more than {MAX_SYSTEMS}", at("systems")));
        }
        let mut system_ids = HashSet::new();
        for (j, system) in b.systems.iter().enumerate() {
            unique_id(&at(&format!("systems[{j}]")), system, &mut system_ids)?;
        }
        if b.memory_mib > MAX_MEMORY_MIB {
            return Err(format!(
                "{} {} is more than {MAX_MEMORY_MIB}",
                at("memory-mib"),
                b.memory_mib
            ));
        }
        blocks.push(ResourceBlock {
            id: b.id,
            name: b.name,
            block_types: b.block_types.into_iter().map(block_type).collect(),
            state: match b.state {
                wk::CompositionState::Unused => CompositionState::Unused,
                wk::CompositionState::Composing => CompositionState::Composing,
                wk::CompositionState::Composed => CompositionState::Composed,
                wk::CompositionState::ComposedAndAvailable => {
                    CompositionState::ComposedAndAvailable
                }
                wk::CompositionState::Failed => CompositionState::Failed,
                wk::CompositionState::Unavailable => CompositionState::Unavailable,
            },
            reserved: b.reserved,
            max_compositions: b.max_compositions,
            compositions: b.compositions,
            zones: b.zones,
            processors: b.processors,
            cores: b.cores,
            memory_mib: b.memory_mib,
            drives: b.drives,
            drive_bytes: b.drive_bytes,
            nics: b.nics,
            systems: b.systems,
        });
    }
    Ok(CompositionService {
        blocks,
        zones,
        offered_zones: service.offered_zones,
        limits: service
            .limits
            .into_iter()
            .map(|l| BlockLimit {
                block_type: block_type(l.block_type),
                min: l.min,
                max: l.max,
            })
            .collect(),
    })
}

fn block_type(t: wk::BlockType) -> BlockType {
    match t {
        wk::BlockType::Compute => BlockType::Compute,
        wk::BlockType::Processor => BlockType::Processor,
        wk::BlockType::Memory => BlockType::Memory,
        wk::BlockType::Network => BlockType::Network,
        wk::BlockType::Storage => BlockType::Storage,
        wk::BlockType::ComputerSystem => BlockType::ComputerSystem,
        wk::BlockType::Expansion => BlockType::Expansion,
    }
}

const MAX_ATTRIBUTES: usize = 10_000;
const MAX_ALLOWED: usize = 1024;
const MAX_VALUE: usize = 4096;
const MAX_ATTRIBUTE_NAME: usize = 256;

/// A BIOS attribute's name: ASCII letters, digits, `_`, `-` and `.`.
fn attribute_name(at: &str, name: &str) -> Result<(), String> {
    if !podium_types::is_attribute_name(name) {
        return Err(format!(
            "{at} `{}` must be 1 to {MAX_ATTRIBUTE_NAME} ASCII letters, digits, `_`, `-` or `.`",
            shown(name)
        ));
    }
    Ok(())
}

fn attribute_value(at: &str, value: ws::AttributeValue) -> Result<BiosValue, String> {
    Ok(match value {
        ws::AttributeValue::Text(t) => {
            text(at, &t, MAX_VALUE)?;
            BiosValue::Text(t)
        }
        ws::AttributeValue::Integer(i) => BiosValue::Integer(i),
        ws::AttributeValue::Boolean(b) => BiosValue::Boolean(b),
    })
}

/// A list of attributes as a map by name; a password's value is dropped, whatever the driver
/// sent.
fn attributes(
    at: &str,
    list: Vec<ws::Attribute>,
    registry: &BTreeMap<String, BiosAttributeEntry>,
) -> Result<BTreeMap<String, Option<BiosValue>>, String> {
    if list.len() > MAX_ATTRIBUTES {
        return Err(format!("{at}: more than {MAX_ATTRIBUTES} attributes"));
    }
    let mut map = BTreeMap::new();
    for (i, a) in list.into_iter().enumerate() {
        let at = format!("{at}[{i}]");
        attribute_name(&format!("{at}.name"), &a.name)?;
        let password = podium_types::is_password_name(&a.name)
            || registry
                .get(&a.name)
                .is_some_and(|e| e.attribute_type == BiosAttributeType::Password);
        let value = match a.value {
            Some(v) if !password => Some(attribute_value(&format!("{at}.value"), v)?),
            _ => None,
        };
        if map.insert(a.name.clone(), value).is_some() {
            return Err(format!("{at}.name `{}` is reported twice", shown(&a.name)));
        }
    }
    Ok(map)
}

const MAX_PARTS: usize = 4096;

/// Optional text fields, each held to the rule of text.
fn texts(fields: &[(&str, &Option<String>)]) -> Result<(), String> {
    for (at, value) in fields {
        if let Some(value) = value {
            text(at, value, MAX_TEXT)?;
        }
    }
    Ok(())
}

/// A list of parts: at most [`MAX_PARTS`], each with an id unique in it.
fn parts<'a>(at: &str, ids: impl ExactSizeIterator<Item = &'a String>) -> Result<(), String> {
    if ids.len() > MAX_PARTS {
        return Err(format!("{at}: more than {MAX_PARTS}"));
    }
    let mut seen = HashSet::new();
    for (i, id) in ids.enumerate() {
        unique_id(&format!("{at}[{i}].id"), id, &mut seen)?;
    }
    Ok(())
}

/// A full inventory as a driver read it, checked.
pub(super) fn hardware(h: wi::HardwareInventory) -> Result<HardwareInventory, String> {
    parts("processors", h.processors.iter().map(|p| &p.id))?;
    parts("memory", h.memory.iter().map(|m| &m.id))?;
    parts("storage", h.storage.iter().map(|s| &s.id))?;
    parts("nics", h.nics.iter().map(|n| &n.id))?;
    let mut processors = Vec::with_capacity(h.processors.len());
    for (i, p) in h.processors.into_iter().enumerate() {
        let at = |f: &str| format!("processors[{i}].{f}");
        texts(&[
            (&at("socket"), &p.socket),
            (&at("processor-type"), &p.processor_type),
            (&at("instruction-set"), &p.instruction_set),
            (&at("manufacturer"), &p.manufacturer),
            (&at("model"), &p.model),
        ])?;
        processors.push(Processor {
            id: p.id,
            socket: p.socket,
            processor_type: p.processor_type,
            instruction_set: p.instruction_set,
            manufacturer: p.manufacturer,
            model: p.model,
            cores: p.cores,
            threads: p.threads,
            max_speed_mhz: p.max_speed_mhz,
        });
    }
    let mut memory = Vec::with_capacity(h.memory.len());
    for (i, m) in h.memory.into_iter().enumerate() {
        let at = |f: &str| format!("memory[{i}].{f}");
        texts(&[
            (&at("name"), &m.name),
            (&at("device-type"), &m.device_type),
            (&at("manufacturer"), &m.manufacturer),
            (&at("part-number"), &m.part_number),
            (&at("serial"), &m.serial),
        ])?;
        memory.push(MemoryModule {
            id: m.id,
            name: m.name,
            capacity_mib: m.capacity_mib,
            device_type: m.device_type,
            speed_mhz: m.speed_mhz,
            manufacturer: m.manufacturer,
            part_number: m.part_number,
            serial: m.serial,
        });
    }
    let mut storage = Vec::with_capacity(h.storage.len());
    for (i, s) in h.storage.into_iter().enumerate() {
        texts(&[(&format!("storage[{i}].name"), &s.name)])?;
        parts(
            &format!("storage[{i}].drives"),
            s.drives.iter().map(|d| &d.id),
        )?;
        let mut drives = Vec::with_capacity(s.drives.len());
        for (j, d) in s.drives.into_iter().enumerate() {
            let at = |f: &str| format!("storage[{i}].drives[{j}].{f}");
            texts(&[
                (&at("name"), &d.name),
                (&at("manufacturer"), &d.manufacturer),
                (&at("model"), &d.model),
                (&at("serial"), &d.serial),
                (&at("media-type"), &d.media_type),
                (&at("protocol"), &d.protocol),
            ])?;
            drives.push(Drive {
                id: d.id,
                name: d.name,
                manufacturer: d.manufacturer,
                model: d.model,
                serial: d.serial,
                capacity_bytes: d.capacity_bytes,
                media_type: d.media_type,
                protocol: d.protocol,
            });
        }
        storage.push(StorageController {
            id: s.id,
            name: s.name,
            drives,
        });
    }
    let mut nics = Vec::with_capacity(h.nics.len());
    for (i, n) in h.nics.into_iter().enumerate() {
        texts(&[(&format!("nics[{i}].name"), &n.name)])?;
        nics.push(NicLink {
            id: n.id,
            name: n.name,
            mac: n
                .mac
                .map(|m| mac(&format!("nics[{i}].mac"), &m))
                .transpose()?,
            link: n.link.map(|l| match l {
                wi::LinkState::Up => LinkState::Up,
                wi::LinkState::Down => LinkState::Down,
                wi::LinkState::NoLink => LinkState::NoLink,
            }),
            speed_mbps: n.speed_mbps,
        });
    }
    Ok(HardwareInventory {
        processors,
        memory,
        storage,
        nics,
    })
}

const MAX_COMPONENTS: usize = 1024;
const MAX_MESSAGES: usize = 64;

/// Firmware components as a driver read them, checked.
pub(super) fn firmware(list: Vec<wf::FirmwareComponent>) -> Result<Vec<FirmwareComponent>, String> {
    if list.len() > MAX_COMPONENTS {
        return Err(format!("components: more than {MAX_COMPONENTS}"));
    }
    let mut seen = HashSet::new();
    let mut components = Vec::with_capacity(list.len());
    for (i, c) in list.into_iter().enumerate() {
        unique_id(&format!("components[{i}].id"), &c.id, &mut seen)?;
        text(&format!("components[{i}].name"), &c.name, MAX_TEXT)?;
        texts(&[(&format!("components[{i}].version"), &c.version)])?;
        components.push(FirmwareComponent {
            id: c.id,
            name: c.name,
            kind: match c.kind {
                wf::ComponentKind::Bios => FirmwareKind::Bios,
                wf::ComponentKind::Bmc => FirmwareKind::Bmc,
                wf::ComponentKind::Nic => FirmwareKind::Nic,
                wf::ComponentKind::Other => FirmwareKind::Other,
            },
            version: c.version,
            updateable: c.updateable,
        });
    }
    Ok(components)
}

/// A task's reference, as `update-firmware` answered it: an id.
pub(super) fn task_reference(task: &str) -> Result<(), String> {
    system_id("task", task)
}

/// A task's status as a driver read it, checked.
pub(super) fn task(status: wf::TaskStatus) -> Result<TaskStatus, String> {
    if status.percent.is_some_and(|p| p > 100) {
        return Err("percent: over 100".into());
    }
    if status.messages.len() > MAX_MESSAGES {
        return Err(format!("messages: more than {MAX_MESSAGES}"));
    }
    for (i, m) in status.messages.iter().enumerate() {
        text(&format!("messages[{i}]"), m, MAX_TEXT)?;
    }
    Ok(TaskStatus {
        state: match status.state {
            wf::TaskState::Running => TaskState::Running,
            wf::TaskState::Completed => TaskState::Completed,
            wf::TaskState::Failed => TaskState::Failed,
        },
        percent: status.percent,
        messages: status.messages,
    })
}

/// Secure boot as a driver read it, checked.
pub(super) fn secure_boot(state: ws::SecureBoot) -> Result<SecureBoot, String> {
    if let Some(mode) = &state.mode {
        text("mode", mode, MAX_TEXT)?;
    }
    Ok(SecureBoot {
        enabled: state.enabled,
        current_boot: state.current_boot,
        mode: state.mode,
    })
}

/// A BIOS as a driver read it, checked (see `settings` in the contract).
pub(super) fn bios(bios: ws::Bios) -> Result<Bios, String> {
    if bios.registry.len() > MAX_ATTRIBUTES {
        return Err(format!("registry: more than {MAX_ATTRIBUTES} entries"));
    }
    let mut registry = BTreeMap::new();
    for (i, e) in bios.registry.into_iter().enumerate() {
        let at = |field: &str| format!("registry[{i}].{field}");
        attribute_name(&at("name"), &e.name)?;
        if let Some(name) = &e.display_name {
            text(&at("display-name"), name, MAX_TEXT)?;
        }
        if e.allowed.len() > MAX_ALLOWED {
            return Err(format!("{}: more than {MAX_ALLOWED} values", at("allowed")));
        }
        for (j, v) in e.allowed.iter().enumerate() {
            text(&at(&format!("allowed[{j}]")), v, MAX_TEXT)?;
        }
        let entry = BiosAttributeEntry {
            attribute_type: match e.attribute_type {
                ws::AttributeType::Enumeration => BiosAttributeType::Enumeration,
                ws::AttributeType::Text => BiosAttributeType::Text,
                ws::AttributeType::Integer => BiosAttributeType::Integer,
                ws::AttributeType::Boolean => BiosAttributeType::Boolean,
                ws::AttributeType::Password => BiosAttributeType::Password,
            },
            display_name: e.display_name,
            allowed_values: e.allowed,
            read_only: e.read_only,
            reset_required: e.reset_required,
            lower_bound: e.lower_bound,
            upper_bound: e.upper_bound,
            min_length: e.min_length,
            max_length: e.max_length,
        };
        if registry.insert(e.name.clone(), entry).is_some() {
            return Err(format!(
                "{} `{}` is reported twice",
                at("name"),
                shown(&e.name)
            ));
        }
    }
    let attributes_now = attributes("attributes", bios.attributes, &registry)?;
    let pending = attributes("pending", bios.pending, &registry)?;
    let mut apply_times: Vec<ApplyTime> = bios
        .apply_times
        .into_iter()
        .map(|t| match t {
            ws::ApplyTime::Immediate => ApplyTime::Immediate,
            ws::ApplyTime::OnReset => ApplyTime::OnReset,
            ws::ApplyTime::AtMaintenanceWindowStart => ApplyTime::AtMaintenanceWindowStart,
            ws::ApplyTime::InMaintenanceWindowOnReset => ApplyTime::InMaintenanceWindowOnReset,
        })
        .collect();
    apply_times.sort();
    apply_times.dedup();
    Ok(Bios {
        attributes: attributes_now,
        registry,
        pending,
        apply_times,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn system(id: &str) -> wd::System {
        wd::System {
            id: id.into(),
            kind: wd::SystemKind::System,
            name: "node".into(),
            uuid: Some("27946B59-9E44-4FA7-8E91-000000000001".into()),
            manufacturer: None,
            model: None,
            serial: None,
            cpu_count: 4,
            memory_mib: 8192,
            nics: vec![wd::Nic {
                id: "eth0".into(),
                name: Some("eth0".into()),
                mac: "52-54-00-AA-00-01".into(),
                speed_mbps: Some(1000),
            }],
            power: wd::PowerState::Off,
            boot: None,
            media_slots: vec![wd::MediaSlot {
                id: "Cd".into(),
                media_types: vec![wd::MediaType::Cd],
                inserted: false,
                image: None,
            }],
        }
    }

    fn refused(change: impl FnOnce(&mut Vec<wd::System>)) -> String {
        let mut list = vec![system("/redfish/v1/Systems/1")];
        change(&mut list);
        systems(list).expect_err("refused")
    }

    #[test]
    fn a_well_formed_system_is_kept_normalised() {
        let out = systems(vec![system("/redfish/v1/Systems/1")]).unwrap();
        assert_eq!(out[0].nics[0].mac, "52:54:00:aa:00:01");
        assert_eq!(
            out[0].uuid.as_deref(),
            Some("27946b59-9e44-4fa7-8e91-000000000001")
        );
    }

    #[test]
    fn every_field_of_a_kind_is_held_to_the_same_rule() {
        let r = refused(|l| l[0].uuid = Some("../../etc".into()));
        assert_eq!(r, "systems[0].uuid `../../etc` is not a UUID");
        let r = refused(|l| l[0].memory_mib = u64::MAX);
        assert!(r.starts_with("systems[0].memory-mib"), "{r}");
        let r = refused(|l| l[0].cpu_count = u32::MAX);
        assert!(r.starts_with("systems[0].cpu-count"), "{r}");
        let r = refused(|l| l[0].name = "evil\u{202e}gnp.exe".into());
        assert!(r.starts_with("systems[0].name `evil\\u{202e}"), "{r}");
        let r = refused(|l| l[0].model = Some("zero\u{200b}width".into()));
        assert!(r.starts_with("systems[0].model"), "{r}");
        for bad in ["a\0b", "a\rb", "a\nb", "a\x1bb"] {
            let r = refused(|l| l[0].nics[0].id = bad.into());
            assert!(r.starts_with("systems[0].nics[0].id"), "{bad:?}: {r}");
            let r = refused(|l| l[0].nics[0].name = Some(bad.into()));
            assert!(r.starts_with("systems[0].nics[0].name"), "{bad:?}: {r}");
            let r = refused(|l| l[0].media_slots[0].id = bad.into());
            assert!(
                r.starts_with("systems[0].media-slots[0].id"),
                "{bad:?}: {r}"
            );
        }
    }

    #[test]
    fn macs_are_unicast_nonzero_and_each_reported_once() {
        for (mac, why) in [
            ("ff:ff:ff:ff:ff:ff", "broadcast"),
            ("01:00:5e:00:00:01", "multicast"),
            ("00:00:00:00:00:00", "all-zero"),
            ("zz:zz:zz:zz:zz:zz", "not a MAC"),
        ] {
            let r = refused(|l| l[0].nics[0].mac = mac.into());
            assert!(r.contains(why), "{mac}: {r}");
        }
        let r = refused(|l| {
            let nic = l[0].nics[0].clone();
            l[0].nics.push(wd::Nic {
                id: "eth1".into(),
                ..nic
            });
        });
        assert_eq!(
            r,
            "systems[0].nics[1].mac `52:54:00:aa:00:01` is also systems[0].nics[0].mac"
        );
        // The same MAC on two hosts.
        let r = refused(|l| l.push(system("/redfish/v1/Systems/2")));
        assert!(r.contains("is also systems[0].nics[0].mac"), "{r}");
    }

    #[test]
    fn ids_are_unique_within_their_list() {
        let r = refused(|l| {
            let slot = l[0].media_slots[0].clone();
            l[0].media_slots.push(slot);
        });
        assert_eq!(r, "systems[0].media-slots[1].id `Cd` is reported twice");
        let r = refused(|l| {
            let mut other = system("/redfish/v1/Systems/1");
            other.nics.clear();
            l.push(other);
        });
        assert!(r.contains("is reported twice"), "{r}");
    }

    fn chassis(id: &str, parent: Option<&str>) -> wc::Chassis {
        wc::Chassis {
            id: id.into(),
            name: id.into(),
            chassis_type: wc::ChassisType::Blade,
            manufacturer: None,
            model: None,
            serial: None,
            location: Some("Slot 1".into()),
            power: Some(wd::PowerState::On),
            health: Some(wc::Health::Ok),
            contained_by: parent.map(Into::into),
            systems: vec!["/redfish/v1/Systems/1".into()],
        }
    }

    #[test]
    fn a_tree_passes_in_any_order_and_keeps_what_it_says() {
        let tree = super::chassis(vec![
            chassis("blade", Some("enclosure")),
            chassis("enclosure", Some("rack")),
            chassis("rack", None),
        ])
        .unwrap();
        assert_eq!(tree[0].contained_by.as_deref(), Some("enclosure"));
        assert_eq!(tree[0].chassis_type, ChassisType::Blade);
        assert_eq!(tree[0].power, Some(podium_types::PowerState::On));
        assert_eq!(tree[0].health, Some(Health::Ok));
        assert_eq!(tree[2].contained_by, None);
    }

    #[test]
    fn a_chassis_in_no_chassis_of_the_answer_or_in_itself_is_refused_naming_it() {
        let reason = |list| super::chassis(list).unwrap_err();
        assert_eq!(
            reason(vec![chassis("a", Some("gone"))]),
            "chassis[0].contained-by `gone` is no chassis of this answer"
        );
        assert!(
            reason(vec![chassis("a", Some("a"))])
                .starts_with("chassis[0].contained-by: `a` is in itself"),
        );
        let looped = reason(vec![
            chassis("top", None),
            chassis("a", Some("b")),
            chassis("b", Some("c")),
            chassis("c", Some("a")),
        ]);
        assert!(looped.contains("is in itself"), "{looped}");
        assert_eq!(
            reason(vec![chassis("a", None), chassis("a", None)]),
            "chassis[1].id `a` is reported twice"
        );
        let mut twice = chassis("a", None);
        twice.systems = vec!["s".into(), "s".into()];
        assert_eq!(
            reason(vec![twice]),
            "chassis[0].systems[1] `s` is reported twice"
        );
        let mut unnamed = chassis("a", None);
        unnamed.chassis_type = wc::ChassisType::Other(String::new());
        assert_eq!(reason(vec![unnamed]), "chassis[0].chassis-type is empty");
        let mut hidden = chassis("a", None);
        hidden.location = Some("Slot\u{202e}1".into());
        assert!(reason(vec![hidden]).starts_with("chassis[0].location"));
    }

    #[test]
    fn a_long_chain_of_chassis_is_walked_once() {
        // 100,000 chassis each in the next: checked in linear time, not quadratic.
        let n = 100_000;
        let list = (0..n)
            .map(|i| {
                let parent = (i + 1 < n).then(|| format!("c{}", i + 1));
                chassis(&format!("c{i}"), parent.as_deref())
            })
            .collect();
        assert_eq!(super::chassis(list).unwrap().len(), n);
    }

    fn block(id: &str, zones: &[&str]) -> wk::ResourceBlock {
        wk::ResourceBlock {
            id: id.into(),
            name: id.into(),
            block_types: vec![wk::BlockType::Compute],
            state: wk::CompositionState::Unused,
            reserved: false,
            max_compositions: 1,
            compositions: 0,
            zones: zones.iter().map(|z| (*z).into()).collect(),
            processors: 2,
            cores: 16,
            memory_mib: 32768,
            drives: 0,
            drive_bytes: 0,
            nics: 1,
            systems: Vec::new(),
        }
    }

    fn service(blocks: Vec<wk::ResourceBlock>, offered: &[&str]) -> wk::CompositionService {
        wk::CompositionService {
            blocks,
            zones: vec![wk::ResourceZone {
                id: "z1".into(),
                name: "Zone 1".into(),
            }],
            offered_zones: offered.iter().map(|z| (*z).into()).collect(),
            limits: vec![wk::BlockLimit {
                block_type: wk::BlockType::Compute,
                min: Some(1),
                max: Some(1),
            }],
        }
    }

    #[test]
    fn a_composition_service_names_only_zones_it_lists() {
        let kept = super::composition(service(vec![block("b1", &["z1"])], &["z1"])).unwrap();
        assert_eq!(kept.blocks[0].block_types, [BlockType::Compute]);
        assert_eq!(kept.blocks[0].state, CompositionState::Unused);
        assert_eq!(kept.limits[0].min, Some(1));
        assert_eq!(
            super::composition(service(vec![block("b1", &["z9"])], &[])).unwrap_err(),
            "blocks[0].zones[0] `z9` is no zone of this answer"
        );
        assert_eq!(
            super::composition(service(vec![], &["z9"])).unwrap_err(),
            "offered-zones[0] `z9` is no zone of this answer"
        );
        assert_eq!(
            super::composition(service(vec![block("b1", &[]), block("b1", &[])], &[])).unwrap_err(),
            "blocks[1].id `b1` is reported twice"
        );
    }
}
