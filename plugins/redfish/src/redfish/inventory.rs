//! A system's full inventory: `Processors`, `Memory`, `Storage` (controllers and their `Drives`)
//! and `SimpleStorage` (its `Devices`), `EthernetInterfaces` with `LinkStatus`.
//!
//! Read as Ironic's redfish inspection reads it: a part the BMC does not link, or answers with
//! an error (sushy-tools links `Memory` and answers it with a 404; its `Storage` is a 500 unless
//! configured), is empty, with a warning, rather than failing the whole read. Parts whose
//! `Status.State` is `Absent` (an empty DIMM slot or drive bay) are left out.

use futures::future::join_all;
use podium_plugin::driver::{
    Drive, HardwareInventory, LinkState, MemoryModule, NicLink, Processor, StorageController,
};
use podium_plugin::{Error, log};
use serde_json::Value;

use super::{Client, check_system_id, last_segment, link_path, normalise_mac};
use crate::error::UrlSource;
use crate::model::{ComputerSystem, EthernetInterface, Link};

impl Client {
    /// The system's processors, memory modules, storage and NICs; `unsupported` where it links
    /// none of them.
    pub(crate) async fn read_hardware(&self, system_id: &str) -> Result<HardwareInventory, Error> {
        check_system_id(system_id)?;
        let system: ComputerSystem = self.get(system_id, UrlSource::Caller).await?;
        let links = [
            &system.processors,
            &system.memory,
            &system.storage,
            &system.simple_storage,
            &system.ethernet_interfaces,
        ];
        if links.iter().all(|l| l.is_none()) {
            return Err(Error::Unsupported(format!(
                "the full inventory: {system_id} links no Processors, Memory, Storage, \
                 SimpleStorage or EthernetInterfaces"
            )));
        }
        let (processors, memory, storage, simple, nics) = futures::join!(
            self.part_members(&system.processors, system_id, "Processors"),
            self.part_members(&system.memory, system_id, "Memory"),
            self.part_members(&system.storage, system_id, "Storage"),
            self.part_members(&system.simple_storage, system_id, "SimpleStorage"),
            self.nic_links(&system.ethernet_interfaces, system_id),
        );
        let mut controllers: Vec<StorageController> = join_all(
            storage
                .iter()
                .map(|(path, s)| self.storage_controller(path, s)),
        )
        .await;
        // A BMC may show one controller both ways: `SimpleStorage` only where `Storage` has
        // none (as sushy, and so Ironic, read them).
        if controllers.is_empty() {
            controllers.extend(simple.iter().map(|(path, s)| simple_storage(path, s)));
        }
        Ok(HardwareInventory {
            processors: processors.iter().map(|(p, v)| processor(p, v)).collect(),
            memory: memory.iter().map(|(p, v)| memory_module(p, v)).collect(),
            storage: controllers,
            nics,
        })
    }

    /// The members of a part's collection that are present, each with its path; none where the
    /// system links none, or the BMC fails to answer (logged).
    async fn part_members(
        &self,
        link: &Option<Link>,
        system_id: &str,
        what: &str,
    ) -> Vec<(String, Value)> {
        let Some(link) = link else {
            return Vec::new();
        };
        let read = async {
            let path = link_path(link, &format!("GET {system_id}: {what}"))?;
            let paths = self.members(&path).await?;
            let members =
                join_all(paths.iter().map(|p| self.get_object(p, UrlSource::Service))).await;
            Ok::<_, Error>(
                paths
                    .into_iter()
                    .zip(members)
                    .filter_map(|(p, m)| match m {
                        Ok(m) => Some((p, m)),
                        Err(e) => {
                            log::warn(&format!("{p}: left out of the inventory: {e}"));
                            None
                        }
                    })
                    .filter(|(_, m)| present(m))
                    .collect(),
            )
        };
        read.await.unwrap_or_else(|e| {
            log::warn(&format!(
                "{system_id}: its {what} cannot be read, so the inventory has none: {e}"
            ));
            Vec::new()
        })
    }

    /// The NICs with their link (not the virtual interfaces, which discovery leaves out too);
    /// those without a usable MAC keep their link, without a MAC.
    async fn nic_links(&self, link: &Option<Link>, system_id: &str) -> Vec<NicLink> {
        let Some(link) = link else {
            return Vec::new();
        };
        let read = async {
            let path = link_path(link, &format!("GET {system_id}: EthernetInterfaces"))?;
            let paths = self.members(&path).await?;
            let interfaces = join_all(
                paths
                    .iter()
                    .map(|p| self.get::<EthernetInterface>(p, UrlSource::Service)),
            )
            .await;
            Ok::<_, Error>(
                paths
                    .into_iter()
                    .zip(interfaces)
                    .filter_map(|(path, i)| match i {
                        // A VLAN over a NIC, carrying its MAC: no NIC of the machine's, as
                        // discovery has it.
                        Ok(i) if i.interface_type.as_deref() == Some("Virtual") => None,
                        Ok(i) => Some((path, i)),
                        Err(e) => {
                            log::warn(&format!("{path}: left out of the inventory: {e}"));
                            None
                        }
                    })
                    .map(|(path, i)| NicLink {
                        id: i.id.unwrap_or_else(|| last_segment(&path).to_owned()),
                        name: i.name,
                        mac: [&i.mac_address, &i.permanent_mac_address]
                            .iter()
                            .find_map(|m| m.as_deref().and_then(normalise_mac))
                            .filter(|m| unicast(m)),
                        link: match i.link_status.as_deref() {
                            Some("LinkUp") => Some(LinkState::Up),
                            Some("LinkDown") => Some(LinkState::Down),
                            Some("NoLink") => Some(LinkState::NoLink),
                            _ => None,
                        },
                        speed_mbps: i.speed_mbps.map(super::to_u32),
                    })
                    .collect(),
            )
        };
        read.await.unwrap_or_else(|e| {
            log::warn(&format!(
                "{system_id}: its EthernetInterfaces cannot be read, so the inventory has none: {e}"
            ));
            Vec::new()
        })
    }

    /// A `Storage` and the drives it links that are present.
    async fn storage_controller(&self, path: &str, storage: &Value) -> StorageController {
        let links: Vec<String> = storage["Drives"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["@odata.id"].as_str().map(str::to_owned))
            .collect();
        let drives = join_all(links.iter().map(|d| self.get_object(d, UrlSource::Service))).await;
        StorageController {
            id: id_of(path, storage),
            name: text(storage, "Name"),
            drives: links
                .iter()
                .zip(drives)
                .filter_map(|(p, d)| match d {
                    Ok(d) => Some((p, d)),
                    Err(e) => {
                        log::warn(&format!("{p}: left out of the inventory: {e}"));
                        None
                    }
                })
                .filter(|(_, d)| present(d))
                .map(|(p, d)| Drive {
                    id: id_of(p, &d),
                    name: text(&d, "Name"),
                    manufacturer: text(&d, "Manufacturer"),
                    model: text(&d, "Model"),
                    serial: text(&d, "SerialNumber"),
                    capacity_bytes: whole(&d["CapacityBytes"]),
                    media_type: text(&d, "MediaType"),
                    protocol: text(&d, "Protocol"),
                })
                .collect(),
        }
    }
}

/// Whether a MAC (as `normalise_mac` writes it) is a NIC's own: an unprogrammed port may report
/// the broadcast address.
fn unicast(mac: &str) -> bool {
    u8::from_str_radix(&mac[..2], 16).is_ok_and(|first| first & 1 == 0)
}

/// Whether a part is there: anything but `Status.State: Absent`.
fn present(part: &Value) -> bool {
    part["Status"]["State"].as_str() != Some("Absent")
}

fn id_of(path: &str, part: &Value) -> String {
    text(part, "Id").unwrap_or_else(|| last_segment(path).to_owned())
}

/// A string field with something in it, trimmed.
fn text(part: &Value, key: &str) -> Option<String> {
    part[key]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A whole number, sent as one or as a string (sushy-tools sends `"TotalCores": "1"`).
fn whole(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn small(value: &Value) -> Option<u32> {
    whole(value).and_then(|n| u32::try_from(n).ok())
}

fn processor(path: &str, p: &Value) -> Processor {
    Processor {
        id: id_of(path, p),
        socket: text(p, "Socket"),
        processor_type: text(p, "ProcessorType"),
        instruction_set: text(p, "InstructionSet"),
        manufacturer: text(p, "Manufacturer"),
        model: text(p, "Model"),
        cores: small(&p["TotalCores"]),
        threads: small(&p["TotalThreads"]),
        max_speed_mhz: small(&p["MaxSpeedMHz"]),
    }
}

fn memory_module(path: &str, m: &Value) -> MemoryModule {
    MemoryModule {
        id: id_of(path, m),
        name: text(m, "Name"),
        capacity_mib: whole(&m["CapacityMiB"]),
        device_type: text(m, "MemoryDeviceType"),
        speed_mhz: small(&m["OperatingSpeedMhz"]),
        manufacturer: text(m, "Manufacturer"),
        part_number: text(m, "PartNumber"),
        serial: text(m, "SerialNumber"),
    }
}

/// A `SimpleStorage` controller: its `Devices` present, known by their place in the list.
fn simple_storage(path: &str, s: &Value) -> StorageController {
    StorageController {
        id: id_of(path, s),
        name: text(s, "Name"),
        drives: s["Devices"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|(_, d)| present(d))
            .map(|(i, d)| Drive {
                id: i.to_string(),
                name: text(d, "Name"),
                manufacturer: text(d, "Manufacturer"),
                model: text(d, "Model"),
                serial: None,
                capacity_bytes: whole(&d["CapacityBytes"]),
                media_type: None,
                protocol: None,
            })
            .collect(),
    }
}
