//! The Redfish client: everything the driver does, on the SDK's `http` and `log` (requests the
//! host sends between the steps of a call in the component, the SDK's test harness in the
//! native tests).
//!
//! Every method is straight-line async code over `Request::send().await`: the SDK runs it as the
//! steps of a `podium:plugin@0.2.0` exchange, and what is awaited together (`try_join!`,
//! `try_join_all`) is sent together: a discovery reads every system in one step, then every
//! system's NICs and media in the next.
//!
//! Every URL it sends is the configured root path or a link the service handed out
//! (`@odata.id`, `Members@odata.nextLink`, an action `target`); the host resolves it against the
//! endpoint and adds the credentials. A system id is the system's `@odata.id` path.

mod bios;
mod firmware;
mod inventory;

use futures::future::try_join_all;
use podium_plugin::exchange::memo;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::config::{Config, matches_id};
use crate::error::{self, UrlSource};
use podium_plugin::driver::{
    BlockLimit, BlockType, BootMode, BootPersistence, BootSettings, BootTarget, ChassisType,
    ComposeRequest, CompositionService, CompositionState, Health, MediaRequest, MediaSlot,
    MediaType, Nic, PowerAction, PowerState, ResourceBlock, ResourceZone, ServiceInfo, System,
    SystemKind,
};
use podium_plugin::http::{Method, Request};
use podium_plugin::{Error, ErrorExt, log};

use crate::model::{
    Chassis, ComputerSystem, EthernetInterface, Link, Location, Manager, Named, Part, ResetAction,
    ServiceRoot, VirtualMedia,
};

/// The Redfish logic, for one call of the host.
#[derive(Debug)]
pub(crate) struct Client {
    config: Config,
}

/// A virtual media slot and where its actions are.
#[derive(Debug, Clone)]
struct Slot {
    slot: MediaSlot,
    insert_target: String,
    eject_target: String,
}

impl Client {
    pub(crate) fn new(config: Config) -> Self {
        Self { config }
    }

    /// GETs the service root, checks it is one and that the credentials open the `Systems`
    /// collection (a service root is readable without credentials).
    ///
    /// `root-link` is the root's path (its `@odata.id`, else the configured root); the host makes
    /// it absolute against the endpoint.
    pub(crate) async fn probe(&self) -> Result<ServiceInfo, Error> {
        let root_path = &self.config.root;
        let root: ServiceRoot = self.get(root_path, UrlSource::Service).await?;
        if root.systems.is_none() && root.redfish_version.is_none() {
            return Err(Error::Protocol(format!(
                "GET {root_path}: not a Redfish service root (no Systems link, no RedfishVersion)"
            )));
        }
        if let Some(systems) = &root.systems {
            let path = link_path(systems, &format!("GET {root_path}: Systems"))?;
            self.get_object(&path, UrlSource::Service).await?;
        }
        Ok(ServiceInfo {
            root_link: root.odata_id.unwrap_or_else(|| root_path.clone()),
            product: root.product.or(root.vendor),
            version: root.redfish_version,
        })
    }

    /// Every system of the service's `Systems` collection, with its inventory; restricted to
    /// `system_ids` when the configuration has them. Chassis are no hosts: they are the
    /// component tree (`discover_chassis`).
    pub(crate) async fn discover(&self) -> Result<Vec<System>, Error> {
        let root_path = &self.config.root;
        let root: ServiceRoot = self.get(root_path, UrlSource::Service).await?;
        let systems = self
            .linked_members(&root.systems, root_path, "Systems")
            .await?;
        let selected: Vec<&String> = systems.iter().filter(|p| self.config.selects(p)).collect();
        let found = try_join_all(selected.iter().map(|p| self.system_inventory(p))).await?;
        for id in self.config.system_ids.iter().flatten() {
            if !systems.iter().any(|path| matches_id(id, path)) {
                log::warn(&format!(
                    "system_ids: {id} matches no system of the service"
                ));
            }
        }
        Ok(found)
    }

    /// The component tree: every chassis of the service's `Chassis` collection, all read in one
    /// step, with the chassis it stands in (its `Links.ContainedBy`, else the chassis whose
    /// `Links.Contains` names it) and the systems it holds (`Links.ComputerSystems`). A link to a
    /// chassis the collection does not list, or to the chassis itself, is left out with a
    /// warning. A service without a `Chassis` collection has none. Chassis ids are their
    /// `@odata.id` paths, as system ids are.
    pub(crate) async fn discover_chassis(
        &self,
    ) -> Result<Vec<podium_plugin::driver::Chassis>, Error> {
        let root_path = &self.config.root;
        let root: ServiceRoot = self.get(root_path, UrlSource::Service).await?;
        let paths = self
            .linked_members(&root.chassis, root_path, "Chassis")
            .await?;
        let read: Vec<Chassis> =
            try_join_all(paths.iter().map(|p| self.get(p, UrlSource::Service))).await?;
        let key = |path: &str| path.trim_end_matches('/').to_owned();
        // A chassis is known by the link that reached it, as `discover` knows it
        // ([`member_id`]).
        let ids: Vec<String> = paths
            .iter()
            .zip(&read)
            .map(|(path, c)| member_id(path, c.odata_id.as_deref()))
            .collect();
        let known: std::collections::HashMap<String, &str> =
            ids.iter().map(|id| (key(id), id.as_str())).collect();
        // Where a child names no parent, the parent that lists it in `Contains`.
        let mut listed_in = std::collections::HashMap::new();
        for (id, c) in ids.iter().zip(&read) {
            let contains = c.links.as_ref().and_then(|l| l.contains.as_deref());
            for child in contains.unwrap_or_default() {
                if let Some(child) = &child.odata_id {
                    listed_in.entry(key(child)).or_insert_with(|| id.clone());
                }
            }
        }
        let mut tree = Vec::with_capacity(read.len());
        for (id, c) in ids.iter().zip(read) {
            let links = c.links.unwrap_or_default();
            let named = links
                .contained_by
                .and_then(|l| l.odata_id)
                .or_else(|| listed_in.get(&key(id)).cloned());
            let contained_by = match named {
                Some(parent) if key(&parent) == key(id) => {
                    log::warn(&format!("{id}: Links.ContainedBy names the chassis itself"));
                    None
                }
                Some(parent) => match known.get(&key(&parent)) {
                    Some(parent) => Some((*parent).to_owned()),
                    None => {
                        log::warn(&format!(
                            "{id}: Links.ContainedBy {parent} is not in the Chassis collection"
                        ));
                        None
                    }
                },
                None => None,
            };
            tree.push(podium_plugin::driver::Chassis {
                name: c
                    .name
                    .or(c.id)
                    .unwrap_or_else(|| last_segment(id).to_owned()),
                chassis_type: chassis_type(c.chassis_type.as_deref()),
                manufacturer: c.manufacturer,
                model: c.model,
                serial: c.serial_number,
                location: c.location.as_ref().and_then(location_line),
                power: c.power_state.as_deref().map(|p| power_state(Some(p))),
                health: c
                    .status
                    .and_then(|s| s.health)
                    .and_then(|h| lookup(HEALTH, Some(&h))),
                contained_by,
                systems: link_ids(links.computer_systems),
                id: id.clone(),
            });
        }
        Ok(tree)
    }

    /// The composition service (DSP0268's `CompositionService`): every resource block and zone,
    /// each read in one step, then every processor, memory module and drive the blocks hold in
    /// one more (their cores, MiB and bytes); the zones a system may be composed in and the
    /// limits on its blocks, from the `Systems` collection's capabilities for the use case
    /// `ComputerSystemComposition` (`Links.RelatedItem`, every zone where it names none;
    /// `@Redfish.ResourceBlockLimits`). Zone and block ids are their `@odata.id` paths. A link to a zone the service does not
    /// list is left out with a warning. `unsupported` without a composition service, or with
    /// one whose `ServiceEnabled` is false.
    pub(crate) async fn read_composition(&self) -> Result<CompositionService, Error> {
        let root_path = &self.config.root;
        let root: ServiceRoot = self.get(root_path, UrlSource::Service).await?;
        let Some(link) = &root.composition_service else {
            return Err(Error::Unsupported(format!(
                "GET {root_path}: the service has no CompositionService"
            )));
        };
        let service_path = link_path(link, &format!("GET {root_path}: CompositionService"))?;
        let systems_path = root
            .systems
            .as_ref()
            .map(|l| link_path(l, &format!("GET {root_path}: Systems")))
            .transpose()?;
        let (service, systems) = futures::try_join!(
            self.get::<crate::model::CompositionService>(&service_path, UrlSource::Service),
            self.get_optional(systems_path.as_deref())
        )?;
        if service.service_enabled == Some(false) {
            return Err(Error::Unsupported(format!(
                "GET {service_path}: ServiceEnabled is false"
            )));
        }
        let (block_paths, zone_paths) = futures::try_join!(
            self.linked_members(&service.resource_blocks, &service_path, "ResourceBlocks"),
            self.linked_members(&service.resource_zones, &service_path, "ResourceZones")
        )?;
        let use_case = systems.as_ref().and_then(|systems| {
            systems["@Redfish.CollectionCapabilities"]["Capabilities"]
                .as_array()?
                .iter()
                .find(|c| c["UseCase"] == "ComputerSystemComposition")
                .cloned()
        });
        let capabilities_path = use_case
            .as_ref()
            .and_then(|c| c["CapabilitiesObject"]["@odata.id"].as_str())
            .map(str::to_owned);
        let (blocks, zones, capabilities) = futures::try_join!(
            try_join_all(
                block_paths
                    .iter()
                    .map(|p| self.get::<crate::model::ResourceBlock>(p, UrlSource::Service))
            ),
            try_join_all(
                zone_paths
                    .iter()
                    .map(|p| self.get::<Named>(p, UrlSource::Service))
            ),
            self.get_optional(capabilities_path.as_deref())
        )?;
        // Every part of every block, in one step.
        let parts = try_join_all(blocks.iter().zip(&block_paths).map(|(block, path)| {
            let links: Vec<Result<String, Error>> =
                [&block.processors, &block.memory, &block.drives]
                    .into_iter()
                    .flat_map(|list| list.iter().flatten())
                    .map(|l| link_path(l, &format!("GET {path}: a part")))
                    .collect();
            async move {
                let links = links.into_iter().collect::<Result<Vec<_>, _>>()?;
                try_join_all(
                    links
                        .iter()
                        .map(|l| self.get::<Part>(l, UrlSource::Service)),
                )
                .await
            }
        }))
        .await?;

        let key = |path: &str| path.trim_end_matches('/').to_owned();
        let zones: Vec<ResourceZone> = zone_paths
            .iter()
            .zip(zones)
            .map(|(path, z)| {
                let id = member_id(path, z.odata_id.as_deref());
                ResourceZone {
                    name: z
                        .name
                        .or(z.id)
                        .unwrap_or_else(|| last_segment(&id).to_owned()),
                    id,
                }
            })
            .collect();
        let known: std::collections::HashMap<String, &str> =
            zones.iter().map(|z| (key(&z.id), z.id.as_str())).collect();
        let zone_ids = |links: &[Link], whose: &str| -> Vec<String> {
            let mut ids = Vec::new();
            for link in links {
                let Some(zone) = &link.odata_id else { continue };
                match known.get(&key(zone)) {
                    Some(id) if !ids.iter().any(|i| i == id) => ids.push((*id).to_owned()),
                    Some(_) => {}
                    None => log::warn(&format!("{whose}: zone {zone} is not in ResourceZones")),
                }
            }
            ids
        };
        let mut out = Vec::with_capacity(blocks.len());
        for ((path, block), parts) in block_paths.iter().zip(blocks).zip(parts) {
            let id = member_id(path, block.odata_id.as_deref());
            let status = block.status.unwrap_or_default();
            let links = block.links.unwrap_or_default();
            let sum = |f: fn(&Part) -> Option<f64>| parts.iter().filter_map(f).sum::<f64>();
            out.push(ResourceBlock {
                name: block
                    .name
                    .or(block.id)
                    .unwrap_or_else(|| last_segment(&id).to_owned()),
                block_types: block
                    .block_types
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|t| lookup(BLOCK_TYPES, Some(t)))
                    .collect(),
                // Without a state the block cannot be composed safely.
                state: lookup(COMPOSITION_STATES, status.state.as_deref())
                    .unwrap_or(CompositionState::Unavailable),
                reserved: status.reserved.unwrap_or(false),
                max_compositions: status.max_compositions.map_or(1, to_u32),
                compositions: status.compositions.map_or(0, to_u32),
                zones: zone_ids(links.zones.as_deref().unwrap_or_default(), &id),
                processors: len_u32(block.processors.as_deref()),
                cores: to_u32(sum(|p| p.cores)),
                memory_mib: to_u64(sum(|p| p.capacity_mib)),
                drives: len_u32(block.drives.as_deref()),
                drive_bytes: to_u64(sum(|p| p.capacity_bytes)),
                nics: len_u32(block.nics.as_deref()),
                systems: link_ids(links.computer_systems),
                id,
            });
        }
        // Capabilities that name no zone (DMTF's `public-compose-action`: `RelatedItem: []`)
        // hold for every zone; capabilities with no `RelatedItem`, or none at all, offer none.
        let every_zone = use_case.as_ref().is_some_and(|c| {
            c["Links"]["RelatedItem"]
                .as_array()
                .is_some_and(Vec::is_empty)
        });
        let offered: Vec<Link> = use_case
            .and_then(|c| serde_json::from_value(c["Links"]["RelatedItem"].clone()).ok())
            .unwrap_or_default();
        let limits = capabilities
            .as_ref()
            .map(|c| block_limits(&c["@Redfish.ResourceBlockLimits"]))
            .unwrap_or_default();
        let offered_zones = if every_zone {
            zones.iter().map(|z| z.id.clone()).collect()
        } else {
            zone_ids(&offered, "ComputerSystemComposition")
        };
        Ok(CompositionService {
            blocks: out,
            offered_zones,
            zones,
            limits,
        })
    }

    /// Composes a system of the blocks asked for: with the composition service's `Compose`
    /// action where it offers one (a `Manifest` of one `ComposeSystem` stanza, applied; the
    /// system is the stanza's `Response`), else by a POST to the `Systems` collection, whose
    /// answer's `Location` names the system (its path), else the `@odata.id` it answers.
    pub(crate) async fn compose(&self, request: &ComposeRequest) -> Result<String, Error> {
        for block in &request.blocks {
            check_system_id(block)?;
        }
        let root_path = &self.config.root;
        let root: ServiceRoot = self.get(root_path, UrlSource::Service).await?;
        let blocks: Vec<Value> = request
            .blocks
            .iter()
            .map(|b| json!({"@odata.id": b}))
            .collect();
        // The `Compose` action where the composition service offers it.
        if let Some(link) = &root.composition_service {
            let service_path = link_path(link, &format!("GET {root_path}: CompositionService"))?;
            let service: crate::model::CompositionService =
                self.get(&service_path, UrlSource::Service).await?;
            let target = service
                .actions
                .and_then(|a| a.compose)
                .and_then(|a| a.target);
            if let Some(target) = target {
                let body = json!({
                    "RequestFormat": "Manifest",
                    "RequestType": "Apply",
                    "Manifest": {
                        "Expand": "None",
                        "Stanzas": [{
                            "StanzaType": "ComposeSystem",
                            "StanzaId": "podium",
                            "Request": {"Name": request.name, "Links": {"ResourceBlocks": blocks}},
                        }],
                    },
                });
                let (location, answer) = self.post_for_answer(url_path(&target), &body).await?;
                return composed_by_action(&target, &answer, location);
            }
        }
        let Some(systems) = &root.systems else {
            return Err(Error::Unsupported(format!(
                "GET {root_path}: the service has no Systems collection to compose into"
            )));
        };
        let systems = link_path(systems, &format!("GET {root_path}: Systems"))?;
        let body = json!({"Name": request.name, "Links": {"ResourceBlocks": blocks}});
        let (location, answer) = self.post_for_answer(&systems, &body).await?;
        let answered = serde_json::from_slice::<Value>(&answer)
            .ok()
            .and_then(|v| v["@odata.id"].as_str().map(str::to_owned));
        location.or(answered).ok_or_else(|| {
            Error::Protocol(format!(
                "POST {systems}: a system was composed, but the answer names it nowhere (no Location, no @odata.id)"
            ))
        })
    }

    /// POSTs `body` to a URL the service linked to: the `Location` it answered (its path), and
    /// the answer's body.
    async fn post_for_answer(
        &self,
        url: &str,
        body: &Value,
    ) -> Result<(Option<String>, Vec<u8>), Error> {
        let response = Request::post(url)
            .header("Accept", "application/json")
            .header("OData-Version", "4.0")
            .json(body)
            .send()
            .await
            .map_err(|e| error::from_transport(Method::Post, url, UrlSource::Service, e))?;
        if !(200..300).contains(&response.status) {
            return Err(Error::from_status(
                Method::Post,
                url,
                response.status,
                &response.body,
            ));
        }
        let location = response
            .headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("location"))
            .map(|(_, value)| url_path(value).to_owned());
        Ok((location, response.body))
    }

    /// DELETEs a composed system: the service frees its blocks.
    pub(crate) async fn decompose(&self, system_id: &str) -> Result<(), Error> {
        check_system_id(system_id)?;
        self.request(Method::Delete, system_id, UrlSource::Caller, None)
            .await
            .map(drop)
    }

    /// GETs a JSON object where there is a link to one.
    async fn get_optional(&self, path: Option<&str>) -> Result<Option<Value>, Error> {
        match path {
            Some(path) => self.get_object(path, UrlSource::Service).await.map(Some),
            None => Ok(None),
        }
    }

    /// One system's inventory, as `discover` reads it. A chassis is refused: it is a component
    /// of the tree, not a host.
    pub(crate) async fn inspect(&self, system_id: &str) -> Result<System, Error> {
        check_system_id(system_id)?;
        let resource = self.get_object(system_id, UrlSource::Caller).await?;
        let chassis = resource
            .get("@odata.type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("#Chassis."));
        let protocol = |e: serde_json::Error| Error::Protocol(format!("GET {system_id}: {e}"));
        if chassis {
            Err(Error::InvalidInput(format!(
                "{system_id} is a chassis, not a computer system: chassis are the component tree \
                 (discover-chassis), not hosts"
            )))
        } else {
            self.system_of(
                system_id,
                serde_json::from_value(resource).map_err(protocol)?,
            )
            .await
        }
    }

    pub(crate) async fn get_power(&self, system_id: &str) -> Result<PowerState, Error> {
        check_system_id(system_id)?;
        let system: ComputerSystem = self.get(system_id, UrlSource::Caller).await?;
        Ok(power_state(system.power_state.as_deref()))
    }

    /// POSTs `ComputerSystem.Reset` to the target the system advertises, after checking the
    /// reset type against `ResetType@Redfish.AllowableValues` where the service lists them.
    pub(crate) async fn set_power(
        &self,
        system_id: &str,
        action: PowerAction,
    ) -> Result<(), Error> {
        check_system_id(system_id)?;
        let system: ComputerSystem = self.get(system_id, UrlSource::Caller).await?;
        let reset_type = reset_type(action);
        let reset = system.actions.and_then(|a| a.reset.or(a.chassis_reset));
        check_reset_type(system_id, reset.as_ref(), reset_type)?;
        let target = reset.and_then(|r| r.target).unwrap_or_else(|| {
            format!(
                "{}/Actions/ComputerSystem.Reset",
                system_id.trim_end_matches('/')
            )
        });
        self.send_json(Method::Post, &target, &json!({ "ResetType": reset_type }))
            .await
    }

    /// A chassis' own `PowerState`; `unsupported` where it reports none (a rack, say).
    pub(crate) async fn get_chassis_power(&self, chassis_id: &str) -> Result<PowerState, Error> {
        check_resource_id("chassis-id", chassis_id)?;
        let chassis: Chassis = self.get(chassis_id, UrlSource::Caller).await?;
        match chassis.power_state.as_deref() {
            Some(state) => Ok(power_state(Some(state))),
            None => Err(Error::Unsupported(format!(
                "{chassis_id}: the chassis reports no PowerState of its own"
            ))),
        }
    }

    /// POSTs `Chassis.Reset` to the target the chassis advertises, after checking the reset type
    /// against its `ResetType@Redfish.AllowableValues`. A chassis that advertises no
    /// `#Chassis.Reset` takes none: `unsupported`, nothing sent (unlike a system, which is sent
    /// its conventional reset where it advertises none); one advertised without a `target` is
    /// sent to the conventional `.../Actions/Chassis.Reset`.
    pub(crate) async fn set_chassis_power(
        &self,
        chassis_id: &str,
        action: PowerAction,
    ) -> Result<(), Error> {
        check_resource_id("chassis-id", chassis_id)?;
        let chassis: Chassis = self.get(chassis_id, UrlSource::Caller).await?;
        let reset_type = reset_type(action);
        let Some(reset) = chassis.actions.and_then(|a| a.chassis_reset) else {
            return Err(Error::Unsupported(format!(
                "{chassis_id}: the chassis advertises no #Chassis.Reset action"
            )));
        };
        check_reset_type(chassis_id, Some(&reset), reset_type)?;
        let target = reset.target.unwrap_or_else(|| {
            format!("{}/Actions/Chassis.Reset", chassis_id.trim_end_matches('/'))
        });
        self.send_json(Method::Post, &target, &json!({ "ResetType": reset_type }))
            .await
    }

    /// PATCHes the system's `Boot`, after checking the target against
    /// `BootSourceOverrideTarget@Redfish.AllowableValues` where the service lists them.
    pub(crate) async fn set_boot_override(
        &self,
        system_id: &str,
        settings: &BootSettings,
    ) -> Result<(), Error> {
        check_system_id(system_id)?;
        let system: ComputerSystem = self.get(system_id, UrlSource::Caller).await?;
        let target = boot_target_name(settings.target);
        if let Some(allowed) = system
            .boot
            .as_ref()
            .and_then(|b| b.allowed_targets.as_ref())
            .filter(|a| !a.is_empty())
            && settings.target != BootTarget::None
            && !allowed.iter().any(|a| a == target)
        {
            return Err(Error::Unsupported(format!(
                "{system_id}: BootSourceOverrideTarget {target} is not supported (allowed: {})",
                allowed.join(", ")
            )));
        }
        let mut boot = Map::new();
        boot.insert("BootSourceOverrideTarget".into(), target.into());
        boot.insert(
            "BootSourceOverrideEnabled".into(),
            boot_persistence_name(settings.persistence).into(),
        );
        if let Some(mode) = settings.mode {
            boot.insert("BootSourceOverrideMode".into(), boot_mode_name(mode).into());
        }
        let body = json!({ "Boot": boot });
        self.request(Method::Patch, system_id, UrlSource::Caller, Some(&body))
            .await
            .map(drop)
    }

    /// Inserts into the first free slot that takes the media type (CD and DVD slots stand in for
    /// each other), looking at the system's virtual media, else its managers'.
    pub(crate) async fn insert_media(
        &self,
        system_id: &str,
        request: &MediaRequest,
    ) -> Result<(), Error> {
        check_system_id(system_id)?;
        if request.image_url.trim().is_empty() {
            return Err(Error::InvalidInput("image-url: empty".to_owned()));
        }
        let system: ComputerSystem = self.get(system_id, UrlSource::Caller).await?;
        let slots = self.media_slots(system_id, &system).await?;
        let wanted = request.media_type;
        let matching: Vec<&Slot> = slots.iter().filter(|s| takes(&s.slot, wanted)).collect();
        let Some(first) = matching.first() else {
            return Err(Error::Unsupported(no_slot_message(
                system_id, wanted, &slots,
            )));
        };
        let Some(slot) = matching.iter().find(|s| !s.slot.inserted) else {
            return Err(Error::Conflict(format!(
                "{system_id}: every slot taking {} is in use; slot {} holds {}",
                media_type_name(wanted),
                first.slot.id,
                first.slot.image.as_deref().unwrap_or("an image"),
            )));
        };
        let body = json!({
            "Image": request.image_url,
            "Inserted": true,
            "WriteProtected": request.write_protected,
        });
        self.send_json(Method::Post, &slot.insert_target, &body)
            .await
    }

    /// Ejects every inserted slot that takes the media type; nothing inserted is success.
    pub(crate) async fn eject_media(
        &self,
        system_id: &str,
        media_type: MediaType,
    ) -> Result<(), Error> {
        check_system_id(system_id)?;
        let system: ComputerSystem = self.get(system_id, UrlSource::Caller).await?;
        for slot in self.media_slots(system_id, &system).await? {
            if slot.slot.inserted && takes(&slot.slot, media_type) {
                self.send_json(Method::Post, &slot.eject_target, &json!({}))
                    .await?;
            }
        }
        Ok(())
    }

    async fn system_inventory(&self, path: &str) -> Result<System, Error> {
        let system: ComputerSystem = self.get(path, UrlSource::Service).await?;
        self.system_of(path, system).await
    }

    /// A system's inventory from its resource, reading its NICs and media slots.
    async fn system_of(&self, path: &str, system: ComputerSystem) -> Result<System, Error> {
        let id = member_id(path, system.odata_id.as_deref());
        // The NICs and the media slots in the same steps.
        let nics = async {
            match &system.ethernet_interfaces {
                Some(link) => {
                    self.nics(&link_path(
                        link,
                        &format!("GET {path}: EthernetInterfaces"),
                    )?)
                    .await
                }
                None => Ok(Vec::new()),
            }
        };
        let (nics, slots) = futures::try_join!(nics, self.media_slots(path, &system))?;
        let media_slots = slots.into_iter().map(|s| s.slot).collect();
        let cpu_count = system
            .processor_summary
            .as_ref()
            .and_then(|p| p.count)
            .map_or(0, to_u32);
        let memory_mib = system
            .memory_summary
            .as_ref()
            .and_then(|m| m.total_system_memory_gib)
            .map_or(0, gib_to_mib);
        Ok(System {
            name: system
                .name
                .or_else(|| system.id.clone())
                .unwrap_or_else(|| last_segment(&id).to_owned()),
            kind: SystemKind::System,
            uuid: system.uuid,
            manufacturer: system.manufacturer,
            model: system.model,
            serial: system.serial_number,
            cpu_count,
            memory_mib,
            nics,
            power: power_state(system.power_state.as_deref()),
            boot: system.boot.as_ref().and_then(boot_settings),
            media_slots,
            id,
        })
    }

    /// The NICs of an `EthernetInterfaces` collection; an interface without a usable MAC is left
    /// out (and logged).
    async fn nics(&self, collection: &str) -> Result<Vec<Nic>, Error> {
        let paths = self.members(collection).await?;
        let interfaces = try_join_all(
            paths
                .iter()
                .map(|path| self.get::<EthernetInterface>(path, UrlSource::Service)),
        )
        .await?;
        let mut nics: Vec<Nic> = Vec::new();
        for (path, interface) in paths.into_iter().zip(interfaces) {
            // A virtual interface (a VLAN over a NIC, as DMTF's `public-rackmount1` has) is no
            // NIC of the machine's, and carries its NIC's MAC.
            if interface.interface_type.as_deref() == Some("Virtual") {
                log::debug(&format!("{path}: a virtual interface; skipped"));
                continue;
            }
            let raw = [&interface.mac_address, &interface.permanent_mac_address];
            let Some(mac) = raw
                .iter()
                .find_map(|m| m.as_deref().and_then(normalise_mac))
            else {
                log::debug(&format!(
                    "{path}: no usable MACAddress or PermanentMACAddress; skipped"
                ));
                continue;
            };
            if let Some(first) = nics.iter().find(|n| n.mac == mac) {
                log::warn(&format!(
                    "{path}: MAC {mac} is already that of interface {}; skipped",
                    first.id
                ));
                continue;
            }
            nics.push(Nic {
                id: interface
                    .id
                    .unwrap_or_else(|| last_segment(&path).to_owned()),
                name: interface.name,
                mac,
                speed_mbps: interface.speed_mbps.map(to_u32),
            });
        }
        Ok(nics)
    }

    /// The system's virtual media slots, else those of the first of its managers that has any.
    async fn media_slots(
        &self,
        system_path: &str,
        system: &ComputerSystem,
    ) -> Result<Vec<Slot>, Error> {
        let collection = match &system.virtual_media {
            Some(link) => Some(link_path(
                link,
                &format!("GET {system_path}: VirtualMedia"),
            )?),
            None => self.manager_virtual_media(system_path, system).await?,
        };
        let Some(collection) = collection else {
            return Ok(Vec::new());
        };
        let paths = self.members(&collection).await?;
        let media = try_join_all(
            paths
                .iter()
                .map(|path| self.get::<VirtualMedia>(path, UrlSource::Service)),
        )
        .await?;
        Ok(paths
            .iter()
            .zip(media)
            .map(|(path, media)| slot(path, media))
            .collect())
    }

    async fn manager_virtual_media(
        &self,
        system_path: &str,
        system: &ComputerSystem,
    ) -> Result<Option<String>, Error> {
        let managers = system
            .links
            .as_ref()
            .and_then(|l| l.managed_by.as_deref())
            .unwrap_or_default();
        for (i, link) in managers.iter().enumerate() {
            let path = link_path(link, &format!("GET {system_path}: Links.ManagedBy[{i}]"))?;
            let manager: Manager = self.get(&path, UrlSource::Service).await?;
            if let Some(media) = &manager.virtual_media {
                return link_path(media, &format!("GET {path}: VirtualMedia")).map(Some);
            }
        }
        Ok(None)
    }

    /// Every member path of a collection, following `Members@odata.nextLink` page by page.
    /// The members of the collection `link` (a property `what` of the resource at `whose`)
    /// points to; none where the resource has no such link.
    async fn linked_members(
        &self,
        link: &Option<Link>,
        whose: &str,
        what: &str,
    ) -> Result<Vec<String>, Error> {
        match link {
            Some(link) => {
                let path = link_path(link, &format!("GET {whose}: {what}"))?;
                self.members(&path).await
            }
            None => Ok(Vec::new()),
        }
    }

    /// A collection's members, each once: a member listed again (DMTF's `public-compose-action`
    /// lists `SASSled-3` twice) is left out with a warning.
    async fn members(&self, collection: &str) -> Result<Vec<String>, Error> {
        let listed = podium_plugin::http::collection_members(collection).await?;
        let mut seen = std::collections::HashSet::with_capacity(listed.len());
        let mut members = Vec::with_capacity(listed.len());
        for path in listed {
            if seen.insert(path.trim_end_matches('/').to_owned()) {
                members.push(path);
            } else {
                log::warn(&format!("{collection}: {path} is listed twice"));
            }
        }
        Ok(members)
    }

    /// GETs a resource into `T`, kept parsed in the call's state (`memo`): the steps after the
    /// one that read it take `T`, not the payload.
    async fn get<T: DeserializeOwned + Serialize>(
        &self,
        url: &str,
        source: UrlSource,
    ) -> Result<T, Error> {
        let key = format!("{}:{url}", std::any::type_name::<T>());
        memo(key, self.get_parsed(url, source)).await
    }

    async fn get_parsed<T: DeserializeOwned>(
        &self,
        url: &str,
        source: UrlSource,
    ) -> Result<T, Error> {
        let body = self.request(Method::Get, url, source, None).await?;
        // Straight into `T` when the document is an object (a struct would also take an array,
        // field by field): a tree first would allocate every key and value twice. Any failure
        // goes the slow way, which says what is wrong. Fields the driver does not read are
        // skipped unchecked (serde_json does not check an ignored number's range or an ignored
        // string's UTF-8): a BMC's odd OEM section does not fail a call that never reads it.
        if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
            && let Ok(parsed) = serde_json::from_slice(&body)
        {
            return Ok(parsed);
        }
        let value = json_object(url, &body)?;
        serde_json::from_value(value).map_err(|e| Error::Protocol(format!("GET {url}: {e}")))
    }

    /// GETs a resource that must be a JSON object.
    async fn get_object(&self, url: &str, source: UrlSource) -> Result<Value, Error> {
        let body = self.request(Method::Get, url, source, None).await?;
        json_object(url, &body)
    }

    /// Sends to a URL the service linked to; the response body is not needed.
    async fn send_json(&self, method: Method, url: &str, body: &Value) -> Result<(), Error> {
        self.request(method, url, UrlSource::Service, Some(body))
            .await
            .map(drop)
    }

    /// One request; a non-2xx status is an error. A 202 (a task the service runs on) counts as
    /// done: the driver does not follow task monitors.
    async fn request(
        &self,
        method: Method,
        url: &str,
        source: UrlSource,
        body: Option<&Value>,
    ) -> Result<Vec<u8>, Error> {
        let mut request = Request::new(method, url)
            .header("Accept", "application/json")
            .header("OData-Version", "4.0");
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| error::from_transport(method, url, source, e))?;
        if !(200..300).contains(&response.status) {
            return Err(Error::from_status(
                method,
                url,
                response.status,
                &response.body,
            ));
        }
        Ok(response.body)
    }
}

/// The body of `GET url` as a JSON object, or why it is not one.
fn json_object(url: &str, body: &[u8]) -> Result<Value, Error> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Error::Protocol(format!("GET {url}: the response is not JSON ({e})")))?;
    if !value.is_object() {
        return Err(Error::Protocol(format!(
            "GET {url}: the response is not a JSON object"
        )));
    }
    Ok(value)
}

/// A system id is a path the service handed out (or, from services that hand out absolute
/// links, an http(s) URL).
fn check_system_id(system_id: &str) -> Result<(), Error> {
    check_resource_id("system-id", system_id)
}

/// An id the host passed back is a Redfish path (or URL): `field` names it in the error.
fn check_resource_id(field: &str, id: &str) -> Result<(), Error> {
    let well_formed = (id.starts_with('/') && !id.starts_with("//"))
        || id.starts_with("https://")
        || id.starts_with("http://");
    if !well_formed || id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::InvalidInput(format!(
            "{field}: expected a Redfish path such as /redfish/v1/{}/1, found {:?}",
            if field == "chassis-id" {
                "Chassis"
            } else {
                "Systems"
            },
            podium_plugin::truncate(id)
        )));
    }
    Ok(())
}

/// Refuses a reset type the resource's `ResetType@Redfish.AllowableValues` leaves out, where it
/// lists any.
fn check_reset_type(id: &str, reset: Option<&ResetAction>, reset_type: &str) -> Result<(), Error> {
    if let Some(allowed) = reset
        .and_then(|r| r.allowed.as_ref())
        .filter(|a| !a.is_empty())
        && !allowed.iter().any(|a| a == reset_type)
    {
        return Err(Error::Unsupported(format!(
            "{id}: ResetType {reset_type} is not supported (allowed: {})",
            allowed.join(", ")
        )));
    }
    Ok(())
}

/// The `@odata.id`s of a list of links, each once, in their order.
fn link_ids(links: Option<Vec<Link>>) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for id in links.into_iter().flatten().filter_map(|l| l.odata_id) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

fn link_path(link: &Link, what: &str) -> Result<String, Error> {
    link.odata_id
        .clone()
        .ok_or_else(|| Error::Protocol(format!("{what}: the link has no @odata.id")))
}

fn last_segment(path: &str) -> &str {
    let path = path.trim_end_matches('/');
    path.rsplit('/').next().unwrap_or(path)
}

fn slot(path: &str, media: VirtualMedia) -> Slot {
    let base = path.trim_end_matches('/');
    let mut media_types = Vec::new();
    for t in media
        .media_types
        .iter()
        .flatten()
        .filter_map(|t| media_type(t))
    {
        if !media_types.contains(&t) {
            media_types.push(t);
        }
    }
    let actions = media.actions.unwrap_or_default();
    Slot {
        insert_target: actions
            .insert
            .and_then(|a| a.target)
            .unwrap_or_else(|| format!("{base}/Actions/VirtualMedia.InsertMedia")),
        eject_target: actions
            .eject
            .and_then(|a| a.target)
            .unwrap_or_else(|| format!("{base}/Actions/VirtualMedia.EjectMedia")),
        slot: MediaSlot {
            id: media.id.unwrap_or_else(|| last_segment(path).to_owned()),
            media_types,
            inserted: media.inserted.unwrap_or(media.image.is_some()),
            image: media.image,
        },
    }
}

/// Whether a slot takes a media type; CD and DVD slots stand in for each other.
fn takes(slot: &MediaSlot, wanted: MediaType) -> bool {
    slot.media_types.iter().any(|&t| {
        t == wanted
            || matches!(
                (t, wanted),
                (MediaType::Cd, MediaType::Dvd) | (MediaType::Dvd, MediaType::Cd)
            )
    })
}

fn no_slot_message(system_id: &str, wanted: MediaType, slots: &[Slot]) -> String {
    let wanted = media_type_name(wanted);
    if slots.is_empty() {
        return format!(
            "{system_id}: no virtual media slot takes {wanted}: the system and its managers have no virtual media"
        );
    }
    let listed: Vec<String> = slots
        .iter()
        .map(|s| {
            let types: Vec<&str> = s
                .slot
                .media_types
                .iter()
                .map(|&t| media_type_name(t))
                .collect();
            format!("{} ({})", s.slot.id, types.join(", "))
        })
        .collect();
    format!(
        "{system_id}: no virtual media slot takes {wanted}; slots: {}",
        listed.join(", ")
    )
}

fn media_type(redfish: &str) -> Option<MediaType> {
    match redfish.to_ascii_lowercase().as_str() {
        "cd" => Some(MediaType::Cd),
        "dvd" => Some(MediaType::Dvd),
        "floppy" => Some(MediaType::Floppy),
        "usbstick" => Some(MediaType::Usb),
        _ => None,
    }
}

fn media_type_name(media_type: MediaType) -> &'static str {
    match media_type {
        MediaType::Cd => "CD",
        MediaType::Dvd => "DVD",
        MediaType::Floppy => "Floppy",
        MediaType::Usb => "USBStick",
    }
}

fn power_state(redfish: Option<&str>) -> PowerState {
    let Some(state) = redfish else {
        return PowerState::Unknown;
    };
    [
        ("On", PowerState::On),
        ("Off", PowerState::Off),
        ("PoweringOn", PowerState::PoweringOn),
        ("PoweringOff", PowerState::PoweringOff),
    ]
    .into_iter()
    .find(|(name, _)| name.eq_ignore_ascii_case(state))
    .map_or(PowerState::Unknown, |(_, s)| s)
}

fn reset_type(action: PowerAction) -> &'static str {
    match action {
        PowerAction::On => "On",
        PowerAction::Off | PowerAction::ForceOff => "ForceOff",
        PowerAction::GracefulShutdown => "GracefulShutdown",
        PowerAction::GracefulRestart => "GracefulRestart",
        PowerAction::ForceRestart => "ForceRestart",
    }
}

const BOOT_TARGETS: [(BootTarget, &str); 7] = [
    (BootTarget::None, "None"),
    (BootTarget::Pxe, "Pxe"),
    (BootTarget::Cd, "Cd"),
    (BootTarget::Hdd, "Hdd"),
    (BootTarget::UefiHttp, "UefiHttp"),
    (BootTarget::Usb, "Usb"),
    (BootTarget::BiosSetup, "BiosSetup"),
];

const BOOT_PERSISTENCES: [(BootPersistence, &str); 3] = [
    (BootPersistence::Disabled, "Disabled"),
    (BootPersistence::Once, "Once"),
    (BootPersistence::Continuous, "Continuous"),
];

const BOOT_MODES: [(BootMode, &str); 2] = [(BootMode::Uefi, "UEFI"), (BootMode::Legacy, "Legacy")];

fn boot_target_name(target: BootTarget) -> &'static str {
    BOOT_TARGETS
        .iter()
        .find(|(t, _)| *t == target)
        .map_or("None", |(_, name)| name)
}

fn boot_persistence_name(persistence: BootPersistence) -> &'static str {
    BOOT_PERSISTENCES
        .iter()
        .find(|(p, _)| *p == persistence)
        .map_or("Disabled", |(_, name)| name)
}

fn boot_mode_name(mode: BootMode) -> &'static str {
    BOOT_MODES
        .iter()
        .find(|(m, _)| *m == mode)
        .map_or("UEFI", |(_, name)| name)
}

fn lookup<T: Copy>(table: &[(T, &str)], redfish: Option<&str>) -> Option<T> {
    let redfish = redfish?;
    table
        .iter()
        .find(|(_, name)| name.eq_ignore_ascii_case(redfish))
        .map(|(value, _)| *value)
}

/// The boot override the system reports; `none` unless both its target and its persistence are
/// ones the WIT can say.
fn boot_settings(boot: &crate::model::Boot) -> Option<BootSettings> {
    Some(BootSettings {
        target: lookup(&BOOT_TARGETS, boot.target.as_deref())?,
        persistence: lookup(&BOOT_PERSISTENCES, boot.enabled.as_deref())?,
        mode: lookup(&BOOT_MODES, boot.mode.as_deref()),
    })
}

/// `52-54-00-AB-CD-EF`, `5254.00ab.cdef` and the like as `52:54:00:ab:cd:ef`; an all-zero or
/// malformed address is no address.
pub(crate) fn normalise_mac(raw: &str) -> Option<String> {
    let digits: Vec<char> = raw
        .chars()
        .filter(|c| !matches!(c, ':' | '-' | '.' | ' '))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if digits.len() != 12
        || !digits.iter().all(char::is_ascii_hexdigit)
        || digits.iter().all(|&c| c == '0')
    {
        return None;
    }
    let pairs: Vec<String> = digits.chunks(2).map(|p| p.iter().collect()).collect();
    Some(pairs.join(":"))
}

/// A GiB figure (possibly fractional) in whole MiB.
fn gib_to_mib(gib: f64) -> u64 {
    if gib <= 0.0 {
        return 0;
    }
    // `as` saturates at u64::MAX; the value is finite (see `model::number`).
    (gib * 1024.0).round() as u64
}

const BLOCK_TYPES: &[(BlockType, &str)] = &[
    (BlockType::Compute, "Compute"),
    (BlockType::Processor, "Processor"),
    (BlockType::Memory, "Memory"),
    (BlockType::Network, "Network"),
    (BlockType::Storage, "Storage"),
    (BlockType::ComputerSystem, "ComputerSystem"),
    (BlockType::Expansion, "Expansion"),
];

const COMPOSITION_STATES: &[(CompositionState, &str)] = &[
    (CompositionState::Unused, "Unused"),
    (CompositionState::Composing, "Composing"),
    (CompositionState::Composed, "Composed"),
    (
        CompositionState::ComposedAndAvailable,
        "ComposedAndAvailable",
    ),
    (CompositionState::Failed, "Failed"),
    (CompositionState::Unavailable, "Unavailable"),
];

/// `@Redfish.ResourceBlockLimits`: `MinCompute`, `MaxStorage`, ... by block type.
fn block_limits(limits: &Value) -> Vec<BlockLimit> {
    let mut out: Vec<BlockLimit> = Vec::new();
    for (key, value) in limits.as_object().into_iter().flatten() {
        let Some(n) = value.as_f64().filter(|n| n.is_finite()).map(to_u32) else {
            continue;
        };
        let (min, kind) = match (key.strip_prefix("Min"), key.strip_prefix("Max")) {
            (Some(kind), _) => (true, kind),
            (_, Some(kind)) => (false, kind),
            _ => continue,
        };
        let Some(block_type) = lookup(BLOCK_TYPES, Some(kind)) else {
            continue;
        };
        let at = match out.iter().position(|l| l.block_type == block_type) {
            Some(at) => at,
            None => {
                out.push(BlockLimit {
                    block_type,
                    min: None,
                    max: None,
                });
                out.len() - 1
            }
        };
        if min {
            out[at].min = Some(n);
        } else {
            out[at].max = Some(n);
        }
    }
    out
}

fn len_u32<T>(list: Option<&[T]>) -> u32 {
    u32::try_from(list.map_or(0, <[T]>::len)).unwrap_or(u32::MAX)
}

fn to_u64(n: f64) -> u64 {
    if n <= 0.0 {
        return 0;
    }
    n.round() as u64
}

/// The path of a URL (`https://bmc/redfish/v1/Systems/1` is `/redfish/v1/Systems/1`), or the
/// path itself.
fn url_path(url: &str) -> &str {
    match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |at| &rest[at..]),
        None => url,
    }
}

const HEALTH: &[(Health, &str)] = &[
    (Health::Ok, "OK"),
    (Health::Warning, "Warning"),
    (Health::Critical, "Critical"),
];

/// DMTF's `ChassisType`; one the contract has no case for is `other`, by its name.
fn chassis_type(redfish: Option<&str>) -> ChassisType {
    let Some(name) = redfish else {
        return ChassisType::Other("Other".to_owned());
    };
    [
        (ChassisType::Rack, "Rack"),
        (ChassisType::RackGroup, "RackGroup"),
        (ChassisType::Enclosure, "Enclosure"),
        (ChassisType::Blade, "Blade"),
        (ChassisType::Sled, "Sled"),
        (ChassisType::RackMount, "RackMount"),
        (ChassisType::StandAlone, "StandAlone"),
        (ChassisType::Drawer, "Drawer"),
        (ChassisType::Module, "Module"),
        (ChassisType::Zone, "Zone"),
    ]
    .into_iter()
    .find(|(_, n)| n.eq_ignore_ascii_case(name))
    .map_or_else(|| ChassisType::Other(name.to_owned()), |(t, _)| t)
}

/// A chassis' `Location` in one line: its place in a rack (`row North, rack WEB43, U12`), then
/// in its parent (its service label, else `Slot 2`); else the older `Info`.
fn location_line(location: &Location) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(placement) = &location.placement {
        parts.extend(placement.row.as_ref().map(|row| format!("row {row}")));
        parts.extend(placement.rack.as_ref().map(|rack| format!("rack {rack}")));
        parts.extend(placement.rack_offset.map(|u| format!("U{}", to_u32(u))));
    }
    if let Some(part) = &location.part_location {
        match (&part.service_label, &part.location_type, part.ordinal) {
            (Some(label), _, _) => parts.push(label.clone()),
            (None, Some(kind), Some(n)) => parts.push(format!("{kind} {}", to_u32(n))),
            (None, Some(kind), None) => parts.push(kind.clone()),
            (None, None, _) => {}
        }
    }
    if parts.is_empty() {
        location.info.clone()
    } else {
        Some(parts.join(", "))
    }
}

fn to_u32(n: f64) -> u32 {
    if n <= 0.0 {
        return 0;
    }
    n.round() as u32
}

/// The system a `Compose` action composed: the `@odata.id` of its stanza's `Response`
/// (DSP0268: `Manifest.Stanzas[].Response` is the resource the stanza made), else where the
/// answer's `Location` points.
fn composed_by_action(
    target: &str,
    answer: &[u8],
    location: Option<String>,
) -> Result<String, Error> {
    let answer: Value = serde_json::from_slice(answer).unwrap_or(Value::Null);
    answer["Manifest"]["Stanzas"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|stanza| stanza["Response"]["@odata.id"].as_str())
        .map(|id| url_path(id).to_owned())
        .or(location)
        .ok_or_else(|| {
            Error::Protocol(format!(
                "POST {target}: a system was composed, but no stanza of the answer's Manifest \
                 names it (Response.@odata.id), and no Location does"
            ))
        })
}

/// A member's id: the collection's link that reached it, where the member's own `@odata.id`
/// says otherwise. DMTF's `public-composability` mockup serves `ComposableModule7` as
/// `.../ComposableModule6`: trusting the body, two chassis would have one id and the whole
/// discovery would be refused.
fn member_id(path: &str, odata_id: Option<&str>) -> String {
    match odata_id {
        Some(id) if id.trim_end_matches('/') == path.trim_end_matches('/') => id.to_owned(),
        _ => path.to_owned(),
    }
}
