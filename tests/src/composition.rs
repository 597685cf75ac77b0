//! `Composition`: a stateful Redfish composition service, for the tests of composed nodes.
//!
//! No composition emulator exists on any registry (sushy-tools has none), so this one is ours.
//! It starts from one of DMTF's published mockups as it is (kept unchanged in
//! `tests/peers/dmtf-mockups/`, [`mockup`]; `public-composability` in the tests): every `index.json` of the folder is a resource, served
//! at its path under `/redfish/v1`. It then applies DSP0268's rules of composition to what it
//! serves:
//!
//! - **Compose** (`POST /redfish/v1/Systems`): the body may hold only what the collection's
//!   capabilities object (the `Systems` collection's `@Redfish.CollectionCapabilities`, use case
//!   `ComputerSystemComposition`) marks `RequiredOnCreate` or `OptionalOnCreate`, and must hold
//!   what it marks required (`Name`, `Links.ResourceBlocks`); a `Boot` override target must be
//!   one of its allowable values. Each block named must be a member of the `ResourceBlocks`
//!   collection, named once, and free: `Unused`, or sharing-capable with sharing enabled and
//!   fewer compositions than its `MaxCompositions` (`ComposedAndAvailable`), and not reserved.
//!   Every block must be in one zone the capabilities offer (its `Links.RelatedItem`), and the
//!   blocks must keep within `@Redfish.ResourceBlockLimits` (`MinCompute`, `MaxStorage`, ...,
//!   counted by `ResourceBlockType`). The composed system (`SystemType: Composed`, powered off,
//!   with the `ProcessorSummary` and `MemorySummary` a BMC computes from its blocks' CPUs and
//!   memory modules, which the mockup's own composed systems lack) links its blocks, and its `Processors`, `Memory`, `EthernetInterfaces` and
//!   `Storage` (one storage, holding the blocks' drives) link the blocks' own resources, as the
//!   mockup's `ComposedSystem` does. Each block counts the composition, links the system, and is
//!   `Composed` (or `ComposedAndAvailable` while it may be shared further). The answer is 201
//!   with `Location` and the system.
//! - **The `Compose` action**, where the mockup's `CompositionService` advertises one
//!   (`public-compose-action`), at its target as given: a `Manifest` of `ComposeSystem` stanzas,
//!   `RequestType` `Apply`, each stanza's `Request` composed as above, all or none; the answer
//!   gives each stanza its `Response`, the system. Capabilities that name no zone
//!   (`RelatedItem: []`, as in that mockup) hold for every zone.
//! - **Decompose** (`DELETE` of a composed system): the blocks are freed (`Unused` once no
//!   composition holds them), the system and its collections are gone: 204. A system that is
//!   not composed cannot be deleted: 405.
//! - A system's `Reset` action and a `PATCH` of its `Boot` override change its state, as a BMC's
//!   would; a composed system has a virtual CD (`VirtualMedia/Cd`) whose `InsertMedia` and
//!   `EjectMedia` actions change it; nothing else can be changed (405).
//! - **Beside another service** ([`Composition::start_beside`]): sushy-tools' systems stand
//!   beside the mockup's in one service. The `Systems` collection lists both; a request for
//!   anything the mockup does not have is forwarded to sushy-tools as it came.
//!
//! One lock holds the whole state, so two compositions racing for one block never both get it:
//! the second is refused, naming the block. A collection's `Members@odata.count` is the count
//! of its members as served (the mockup's `Systems` collection says 2 and lists 5).
//! Errors are Redfish's (`error.code`, `@Message.ExtendedInfo` with `RelatedProperties`).
//!
//! It is checked on its own against the mockup and against OpenStack `sushy`'s readers of
//! resource blocks and zones (`tests/all/composition.rs`), so it does not merely agree with
//! Podium's driver.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

const ROOT: &str = "/redfish/v1";
const SYSTEMS: &str = "/redfish/v1/Systems";
const BLOCKS: &str = "/redfish/v1/CompositionService/ResourceBlocks";

/// The folder of one of DMTF's mockups kept in `tests/peers/dmtf-mockups/` (`public-composability`).
pub fn mockup(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("peers/dmtf-mockups")
        .join(name)
}

/// A running composition service on 127.0.0.1; stopped when dropped.
#[derive(Debug)]
pub struct Composition {
    url: String,
    state: Arc<Mutex<Resources>>,
    task: tokio::task::JoinHandle<()>,
}

impl Composition {
    /// Serves the mockup in `folder` (its service root is `folder/index.json`) on a free port.
    pub async fn start(folder: &Path) -> Result<Composition> {
        Composition::serve(folder, None).await
    }

    /// Serves the mockup in `folder` with the systems of another Redfish service (sushy-tools at
    /// `beside`, its root at `/redfish/v1`) standing beside the mockup's, as one service: the
    /// `Systems` collection lists the mockup's and then the other's, and a request for a
    /// resource the mockup does not have (a system of the other, its manager, its virtual
    /// media, its actions) is forwarded there as it came, and the answer relayed.
    pub async fn start_beside(folder: &Path, beside: &str) -> Result<Composition> {
        Composition::serve(folder, Some(beside.trim_end_matches('/').to_owned())).await
    }

    async fn serve(folder: &Path, beside: Option<String>) -> Result<Composition> {
        let state = Arc::new(Mutex::new(Resources::load(folder)?));
        let service = Service {
            resources: state.clone(),
            beside: beside.map(|url| {
                Arc::new(Beside {
                    url,
                    client: reqwest::Client::new(),
                })
            }),
        };
        let app = axum::Router::new().fallback(serve).with_state(service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Composition { url, state, task })
    }

    /// `http://127.0.0.1:PORT`, the service root at `/redfish/v1`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How many `Compose` actions the service applied.
    pub fn compose_actions(&self) -> u64 {
        self.state
            .lock()
            .expect("composition state poisoned")
            .actions_applied
    }

    /// How many times `path` was read (`GET`).
    pub fn reads(&self, path: &str) -> u64 {
        let resources = self.state.lock().expect("composition state poisoned");
        resources.reads.get(path).copied().unwrap_or(0)
    }

    /// The resource at `path` as served now.
    pub fn resource(&self, path: &str) -> Option<Value> {
        let resources = self.state.lock().expect("composition state poisoned");
        resources.get(path).cloned()
    }
}

impl Drop for Composition {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Every resource served, by path (`/redfish/v1/...`, no trailing slash), and the next id a
/// composed system takes.
#[derive(Debug)]
struct Resources {
    by_path: BTreeMap<String, Value>,
    /// `$metadata` (CSDL) where the mockup has it.
    metadata: Option<String>,
    composed: u64,
    /// How many `Compose` actions were applied.
    actions_applied: u64,
    /// How many times each path was read.
    reads: BTreeMap<String, u64>,
}

impl Resources {
    fn load(folder: &Path) -> Result<Resources> {
        let mut by_path = BTreeMap::new();
        let mut metadata = None;
        for entry in walkdir::WalkDir::new(folder) {
            let entry = entry?;
            if !entry.file_type().is_file() {
                continue;
            }
            let name = entry.file_name().to_string_lossy();
            let relative = entry
                .path()
                .parent()
                .and_then(|dir| dir.strip_prefix(folder).ok())
                .with_context(|| format!("{} is not under the mockup", entry.path().display()))?;
            let relative = relative.to_string_lossy();
            let path = if relative.is_empty() {
                ROOT.to_owned()
            } else {
                format!("{ROOT}/{relative}")
            };
            if name == "index.json" {
                let text = std::fs::read_to_string(entry.path())?;
                let mut value: Value = serde_json::from_str(&text)
                    .with_context(|| format!("{} is not JSON", entry.path().display()))?;
                recount(&mut value);
                by_path.insert(path, value);
            } else if name == "index.xml" && path == format!("{ROOT}/$metadata") {
                metadata = Some(std::fs::read_to_string(entry.path())?);
            }
        }
        anyhow::ensure!(
            by_path.contains_key(ROOT),
            "{} holds no service root (index.json)",
            folder.display()
        );
        Ok(Resources {
            by_path,
            metadata,
            composed: 0,
            actions_applied: 0,
            reads: BTreeMap::new(),
        })
    }

    fn get(&self, path: &str) -> Option<&Value> {
        self.by_path.get(path)
    }

    /// The capabilities object of composition, and the zones it offers.
    fn capabilities(&self) -> Result<(&Value, Vec<String>), Refusal> {
        let none = || {
            Refusal::new(StatusCode::METHOD_NOT_ALLOWED, "ActionNotSupported")
            .message("this service composes no systems: its Systems collection has no ComputerSystemComposition capabilities")
        };
        let systems = self.get(SYSTEMS).ok_or_else(none)?;
        let use_case = systems["@Redfish.CollectionCapabilities"]["Capabilities"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["UseCase"] == "ComputerSystemComposition")
            .ok_or_else(none)?;
        let capabilities = use_case["CapabilitiesObject"]["@odata.id"]
            .as_str()
            .and_then(|path| self.get(path))
            .ok_or_else(none)?;
        // Capabilities that name no zone (`public-compose-action`) hold for every zone.
        let mut zones = links(&use_case["Links"]["RelatedItem"]);
        if zones.is_empty() {
            zones = links(
                &self
                    .get(&format!("{ROOT}/CompositionService/ResourceZones"))
                    .map_or(Value::Null, |c| c["Members"].clone()),
            );
        }
        Ok((capabilities, zones))
    }

    /// The path of the `CompositionService.Compose` action's target, as the service advertises
    /// it (taken as given: `public-compose-action` misspells it `CompostionService`).
    fn compose_target(&self) -> Option<String> {
        self.get(&format!("{ROOT}/CompositionService"))?["Actions"]["#CompositionService.Compose"]
            ["target"]
            .as_str()
            .map(|t| t.trim_end_matches('/').to_owned())
    }

    /// The `Compose` action (DSP0268): `RequestType` one of its action info's allowable values,
    /// of which this service applies `Apply` (a preview or a reservation is refused as not
    /// supported); `RequestFormat` `Manifest`; each `ComposeSystem` stanza's `Request` composed
    /// as a POST to `Systems` would be, all or none (a stanza refused undoes those before it).
    /// The answer is the manifest, each stanza with its `Response`: the system composed.
    fn compose_action(&mut self, body: &Value) -> Result<Value, Refusal> {
        let kind = body["RequestType"].as_str().ok_or_else(|| {
            Refusal::property(
                "RequestType",
                "ActionParameterMissing",
                "RequestType is required",
            )
        })?;
        match kind {
            "Apply" => {}
            "Preview" | "PreviewReserve" => {
                return Err(Refusal::property(
                    "RequestType",
                    "ActionParameterNotSupported",
                    &format!("RequestType {kind} is not supported by this service"),
                ));
            }
            other => {
                return Err(Refusal::property(
                    "RequestType",
                    "ActionParameterValueNotInList",
                    &format!("RequestType {other} is not one of Preview, PreviewReserve, Apply"),
                ));
            }
        }
        if body.get("RequestFormat").is_some_and(|f| f != "Manifest") {
            return Err(Refusal::property(
                "RequestFormat",
                "ActionParameterValueNotInList",
                "RequestFormat must be Manifest",
            ));
        }
        let mut manifest = body["Manifest"].clone();
        let Some(stanzas) = manifest["Stanzas"].as_array_mut().filter(|s| !s.is_empty()) else {
            return Err(Refusal::property(
                "Manifest/Stanzas",
                "ActionParameterMissing",
                "Manifest.Stanzas must hold at least one stanza",
            ));
        };
        let mut made: Vec<String> = Vec::new();
        for (i, stanza) in stanzas.iter_mut().enumerate() {
            let composed = if stanza["StanzaType"] == "ComposeSystem" {
                self.compose(&stanza["Request"])
            } else {
                Err(Refusal::property(
                    &format!("Manifest/Stanzas/{i}/StanzaType"),
                    "ActionParameterNotSupported",
                    "this service applies ComposeSystem stanzas only",
                ))
            };
            match composed {
                Ok((path, system)) => {
                    made.push(path);
                    stanza["Response"] = system;
                }
                Err(refusal) => {
                    for path in &made {
                        let _ = self.decompose(path);
                    }
                    return Err(refusal);
                }
            }
        }
        self.actions_applied += 1;
        Ok(manifest)
    }

    fn compose(&mut self, body: &Value) -> Result<(String, Value), Refusal> {
        // Cloned: the system made below reads it while the resources change.
        let (capabilities, offered_zones) = self.capabilities().map(|(c, z)| (c.clone(), z))?;
        let body = body
            .as_object()
            .ok_or_else(|| Refusal::malformed("the body is not a JSON object"))?;
        check_create(body, &capabilities)?;
        let name = body["Name"]
            .as_str()
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| {
                Refusal::property(
                    "Name",
                    "PropertyValueTypeError",
                    "Name must be a non-empty string",
                )
            })?;
        if let Some(boot) = body.get("Boot") {
            check_boot(boot, &capabilities["Boot"])?;
        }
        let Some(asked) = body["Links"]["ResourceBlocks"]
            .as_array()
            .filter(|b| !b.is_empty())
        else {
            return Err(Refusal::property(
                "Links/ResourceBlocks",
                "PropertyMissing",
                "Links.ResourceBlocks must list at least one resource block",
            ));
        };
        let members = links(
            &self
                .get(BLOCKS)
                .map_or(Value::Null, |c| c["Members"].clone()),
        );
        let mut blocks: Vec<String> = Vec::new();
        for (i, link) in asked.iter().enumerate() {
            let pointer = format!("Links/ResourceBlocks/{i}");
            let Some(id) = link["@odata.id"].as_str() else {
                return Err(Refusal::property(
                    &pointer,
                    "PropertyValueTypeError",
                    "a resource block is named by an object with @odata.id",
                ));
            };
            let id = id.trim_end_matches('/').to_owned();
            if !members.contains(&id) {
                return Err(Refusal::property(
                    &pointer,
                    "ResourceMissingAtURI",
                    &format!("{id} is not a resource block of this service"),
                ));
            }
            if blocks.contains(&id) {
                return Err(Refusal::property(
                    &pointer,
                    "PropertyValueConflict",
                    &format!("{id} is named twice"),
                ));
            }
            let status = &self.by_path[&id]["CompositionStatus"];
            if !free(status) {
                return Err(Refusal::new(StatusCode::CONFLICT, "ResourceInUse")
                    .message(&format!(
                        "{id} is {} and cannot be composed again",
                        status["CompositionState"].as_str().unwrap_or("not free")
                    ))
                    .related(&pointer));
            }
            blocks.push(id);
        }
        // One zone the capabilities offer holds every block.
        let in_one_zone = offered_zones.iter().any(|zone| {
            blocks
                .iter()
                .all(|b| links(&self.by_path[b]["Links"]["Zones"]).contains(zone))
        });
        if !in_one_zone {
            return Err(Refusal::property(
                "Links/ResourceBlocks",
                "PropertyValueConflict",
                &format!(
                    "no resource zone offered for composition ({}) holds all of these blocks",
                    offered_zones.join(", ")
                ),
            ));
        }
        check_limits(
            &blocks,
            &self.by_path,
            &capabilities["@Redfish.ResourceBlockLimits"],
        )?;

        // The system, its collections, and the blocks' part in it.
        self.composed += 1;
        let mut id = format!("Composed{}", self.composed);
        while self.by_path.contains_key(&format!("{SYSTEMS}/{id}")) {
            self.composed += 1;
            id = format!("Composed{}", self.composed);
        }
        let path = format!("{SYSTEMS}/{id}");
        let mut parts: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
        for block in &blocks {
            let block = &self.by_path[block];
            for kind in ["Processors", "Memory", "EthernetInterfaces", "Drives"] {
                parts
                    .entry(kind)
                    .or_default()
                    .extend(block[kind].as_array().into_iter().flatten().cloned());
            }
        }
        let collection = |kind: &str, odata_type: &str, members: Vec<Value>| {
            json!({
                "@odata.type": format!("#{odata_type}.{odata_type}"),
                "Name": format!("{kind} Collection"),
                "Members@odata.count": members.len(),
                "Members": members,
                "@odata.id": format!("{path}/{kind}"),
            })
        };
        // The summaries a BMC computes (the mockup's composed systems have none): the blocks'
        // CPUs and memory modules.
        let part = |link: &Value| link["@odata.id"].as_str().and_then(|p| self.by_path.get(p));
        let cpus = parts
            .get("Processors")
            .into_iter()
            .flatten()
            .filter_map(part)
            .filter(|p| p["ProcessorType"].as_str().is_none_or(|t| t == "CPU"))
            .count();
        let memory_mib: f64 = parts
            .get("Memory")
            .into_iter()
            .flatten()
            .filter_map(part)
            .filter_map(|m| m["CapacityMiB"].as_f64())
            .sum();
        let uuid = uuid_for(&path);
        let mut system = json!({
            "@odata.type": "#ComputerSystem.v1_27_0.ComputerSystem",
            "Id": id,
            "Name": name,
            "SystemType": "Composed",
            "UUID": uuid,
            "PowerState": "Off",
            "Status": {"State": "Enabled", "Health": "OK"},
            "ProcessorSummary": {"Count": cpus},
            "MemorySummary": {"TotalSystemMemoryGiB": memory_mib / 1024.0},
            "Boot": {
                "BootSourceOverrideEnabled": "Disabled",
                "BootSourceOverrideTarget": "None",
                "BootSourceOverrideTarget@Redfish.AllowableValues":
                    capabilities["Boot"]["BootSourceOverrideTarget@Redfish.AllowableValues"].clone(),
            },
            "Processors": {"@odata.id": format!("{path}/Processors")},
            "Memory": {"@odata.id": format!("{path}/Memory")},
            "EthernetInterfaces": {"@odata.id": format!("{path}/EthernetInterfaces")},
            "Storage": {"@odata.id": format!("{path}/Storage")},
            "VirtualMedia": {"@odata.id": format!("{path}/VirtualMedia")},
            "Links": {"ResourceBlocks": blocks.iter().map(|b| json!({"@odata.id": b})).collect::<Vec<_>>()},
            "Actions": {
                "#ComputerSystem.Reset": {
                    "target": format!("{path}/Actions/ComputerSystem.Reset"),
                    "ResetType@Redfish.AllowableValues": RESET_TYPES,
                },
            },
            "@odata.id": path,
        });
        for field in ["Description", "HostName"] {
            if let Some(value) = body.get(field) {
                system[field] = value.clone();
            }
        }
        if let Some(boot) = body.get("Boot").and_then(Value::as_object) {
            for (key, value) in boot {
                system["Boot"][key] = value.clone();
            }
        }
        let take = |kind: &str| parts.get(kind).cloned().unwrap_or_default();
        let drives = take("Drives");
        // A virtual CD, as a BMC gives a system (a composed one too).
        self.by_path.insert(
            format!("{path}/VirtualMedia"),
            collection(
                "VirtualMedia",
                "VirtualMediaCollection",
                vec![json!({"@odata.id": format!("{path}/VirtualMedia/Cd")})],
            ),
        );
        self.by_path.insert(
            format!("{path}/VirtualMedia/Cd"),
            json!({
                "@odata.type": "#VirtualMedia.v1_6_3.VirtualMedia",
                "Id": "Cd",
                "Name": "Virtual CD",
                "MediaTypes": ["CD", "DVD"],
                "Inserted": false,
                "Image": null,
                "WriteProtected": true,
                "ConnectedVia": "NotConnected",
                "Actions": {
                    "#VirtualMedia.InsertMedia": {
                        "target": format!("{path}/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia"),
                    },
                    "#VirtualMedia.EjectMedia": {
                        "target": format!("{path}/VirtualMedia/Cd/Actions/VirtualMedia.EjectMedia"),
                    },
                },
                "@odata.id": format!("{path}/VirtualMedia/Cd"),
            }),
        );
        let storage = if drives.is_empty() {
            Vec::new()
        } else {
            vec![json!({"@odata.id": format!("{path}/Storage/1")})]
        };
        self.by_path.insert(
            format!("{path}/Processors"),
            collection("Processors", "ProcessorCollection", take("Processors")),
        );
        self.by_path.insert(
            format!("{path}/Memory"),
            collection("Memory", "MemoryCollection", take("Memory")),
        );
        self.by_path.insert(
            format!("{path}/EthernetInterfaces"),
            collection(
                "EthernetInterfaces",
                "EthernetInterfaceCollection",
                take("EthernetInterfaces"),
            ),
        );
        self.by_path.insert(
            format!("{path}/Storage"),
            collection("Storage", "StorageCollection", storage.clone()),
        );
        if !storage.is_empty() {
            self.by_path.insert(
                format!("{path}/Storage/1"),
                json!({
                    "@odata.type": "#Storage.v1_21_0.Storage",
                    "Id": "1",
                    "Name": "Storage of the composed drives",
                    "Status": {"State": "Enabled", "Health": "OK"},
                    "Drives@odata.count": drives.len(),
                    "Drives": drives,
                    "@odata.id": format!("{path}/Storage/1"),
                }),
            );
        }
        for block in &blocks {
            let block = self.by_path.get_mut(block).expect("checked above");
            let status = &mut block["CompositionStatus"];
            let count = status["NumberOfCompositions"].as_u64().unwrap_or(0) + 1;
            status["NumberOfCompositions"] = json!(count);
            status["CompositionState"] = json!(if free_after(status, count) {
                "ComposedAndAvailable"
            } else {
                "Composed"
            });
            push_link(&mut block["Links"]["ComputerSystems"], &path);
        }
        push_link(
            &mut self.by_path.get_mut(SYSTEMS).expect("checked above")["Members"],
            &path,
        );
        recount(self.by_path.get_mut(SYSTEMS).expect("checked above"));
        self.by_path.insert(path.clone(), system.clone());
        Ok((path, system))
    }

    fn decompose(&mut self, path: &str) -> Result<(), Refusal> {
        let system = self.get(path).ok_or_else(|| Refusal::missing(path))?;
        if system["SystemType"] != "Composed" {
            return Err(
                Refusal::new(StatusCode::METHOD_NOT_ALLOWED, "ActionNotSupported").message(
                    &format!("{path} is not a composed system: only those can be deleted"),
                ),
            );
        }
        for block in links(&system["Links"]["ResourceBlocks"]) {
            let Some(block) = self.by_path.get_mut(&block) else {
                continue;
            };
            let status = &mut block["CompositionStatus"];
            let count = status["NumberOfCompositions"]
                .as_u64()
                .unwrap_or(1)
                .saturating_sub(1);
            status["NumberOfCompositions"] = json!(count);
            status["CompositionState"] = json!(if count == 0 {
                "Unused"
            } else if free_after(status, count) {
                "ComposedAndAvailable"
            } else {
                "Composed"
            });
            if let Some(systems) = block["Links"]["ComputerSystems"].as_array_mut() {
                systems.retain(|s| s["@odata.id"] != path);
            }
        }
        let prefix = format!("{path}/");
        self.by_path
            .retain(|p, _| p != path && !p.starts_with(&prefix));
        let systems = self.by_path.get_mut(SYSTEMS).expect("a system was found");
        if let Some(members) = systems["Members"].as_array_mut() {
            members.retain(|m| m["@odata.id"] != path);
        }
        recount(systems);
        Ok(())
    }

    /// A virtual media slot's `InsertMedia` (`insert`) or `EjectMedia` action.
    fn media(&mut self, slot: &str, insert: bool, body: &Value) -> Result<(), Refusal> {
        let media = self
            .by_path
            .get_mut(slot)
            .filter(|m| {
                m["@odata.type"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("#VirtualMedia."))
            })
            .ok_or_else(|| Refusal::missing(slot))?;
        if !insert {
            if media["Inserted"] != true {
                return Err(Refusal::new(StatusCode::BAD_REQUEST, "ActionNotSupported")
                    .message(&format!("{slot} holds no media to eject")));
            }
            media["Inserted"] = json!(false);
            media["Image"] = Value::Null;
            media["ConnectedVia"] = json!("NotConnected");
            return Ok(());
        }
        const KNOWN: &[&str] = &[
            "Image",
            "Inserted",
            "WriteProtected",
            "TransferProtocolType",
            "TransferMethod",
            "UserName",
            "Password",
        ];
        let body = body
            .as_object()
            .ok_or_else(|| Refusal::malformed("the body is not a JSON object"))?;
        if let Some(unknown) = body.keys().find(|k| !KNOWN.contains(&k.as_str())) {
            return Err(Refusal::property(
                unknown,
                "ActionParameterUnknown",
                &format!("{unknown} is not a parameter of InsertMedia"),
            ));
        }
        let image = body
            .get("Image")
            .and_then(Value::as_str)
            .filter(|i| i.starts_with("http://") || i.starts_with("https://"))
            .ok_or_else(|| {
                Refusal::property(
                    "Image",
                    "ActionParameterMissing",
                    "Image, the http(s) URL of the media, is required",
                )
            })?;
        media["Image"] = json!(image);
        media["Inserted"] = json!(
            body.get("Inserted")
                .and_then(Value::as_bool)
                .unwrap_or(true)
        );
        media["WriteProtected"] = json!(
            body.get("WriteProtected")
                .and_then(Value::as_bool)
                .unwrap_or(true)
        );
        media["ConnectedVia"] = json!("URI");
        Ok(())
    }

    /// A system's `Reset` action.
    fn reset(&mut self, system: &str, body: &Value) -> Result<(), Refusal> {
        let system = self
            .by_path
            .get_mut(system)
            .ok_or_else(|| Refusal::missing(system))?;
        let Some(kind) = body["ResetType"].as_str() else {
            return Err(Refusal::property(
                "ResetType",
                "ActionParameterMissing",
                "ResetType is required",
            ));
        };
        let allowed =
            &system["Actions"]["#ComputerSystem.Reset"]["ResetType@Redfish.AllowableValues"];
        if !allowed
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == kind))
        {
            return Err(Refusal::property(
                "ResetType",
                "ActionParameterNotSupported",
                &format!("ResetType {kind} is not one of {allowed}"),
            ));
        }
        let power = match kind {
            "ForceOff" | "GracefulShutdown" => "Off",
            "PushPowerButton" if system["PowerState"] == "On" => "Off",
            "Nmi" => return Ok(()),
            _ => "On",
        };
        system["PowerState"] = json!(power);
        Ok(())
    }

    /// A `PATCH` of a system: its `Boot` override only.
    fn patch_system(&mut self, path: &str, body: &Value) -> Result<Value, Refusal> {
        let system = self
            .by_path
            .get_mut(path)
            .ok_or_else(|| Refusal::missing(path))?;
        let body = body
            .as_object()
            .ok_or_else(|| Refusal::malformed("the body is not a JSON object"))?;
        if let Some(key) = body.keys().find(|k| *k != "Boot") {
            return Err(Refusal::property(
                key,
                "PropertyNotWritable",
                &format!("{key} cannot be changed here"),
            ));
        }
        let boot = &body["Boot"];
        check_boot(boot, &system["Boot"])?;
        for (key, value) in boot.as_object().into_iter().flatten() {
            system["Boot"][key] = value.clone();
        }
        Ok(system.clone())
    }
}

const RESET_TYPES: [&str; 6] = [
    "On",
    "ForceOff",
    "GracefulShutdown",
    "GracefulRestart",
    "ForceRestart",
    "ForceOn",
];

/// May a block with this `CompositionStatus` be composed once more?
fn free(status: &Value) -> bool {
    if status["Reserved"] == true {
        return false;
    }
    match status["CompositionState"].as_str() {
        Some("Unused") => true,
        Some("ComposedAndAvailable") => {
            free_after(status, status["NumberOfCompositions"].as_u64().unwrap_or(0))
        }
        _ => false,
    }
}

/// May a block with `count` compositions be shared with one more?
fn free_after(status: &Value, count: u64) -> bool {
    status["SharingCapable"] == true
        && status["SharingEnabled"] == true
        && count < status["MaxCompositions"].as_u64().unwrap_or(1)
}

/// The body holds only what the capabilities object lets a create set, and all it requires.
fn check_create(body: &Map<String, Value>, capabilities: &Value) -> Result<(), Refusal> {
    let marked =
        |scope: &Value, key: &str, mark: &str| scope[format!("{key}@Redfish.{mark}")] == true;
    for key in body.keys() {
        if key.starts_with("@odata") {
            continue;
        }
        if !marked(capabilities, key, "RequiredOnCreate")
            && !marked(capabilities, key, "OptionalOnCreate")
        {
            return Err(Refusal::property(
                key,
                "PropertyNotWritable",
                &format!("{key} cannot be set when composing a system"),
            ));
        }
    }
    for (scope, prefix, given) in [
        (capabilities, "", Some(body)),
        (
            &capabilities["Links"],
            "Links/",
            body.get("Links").and_then(Value::as_object),
        ),
    ] {
        for key in scope.as_object().into_iter().flat_map(Map::keys) {
            if let Some(required) = key.strip_suffix("@Redfish.RequiredOnCreate")
                && scope[key.as_str()] == true
                && !given.is_some_and(|g| g.contains_key(required))
            {
                return Err(Refusal::property(
                    &format!("{prefix}{required}"),
                    "PropertyMissing",
                    &format!("{prefix}{required} is required to compose a system"),
                ));
            }
        }
    }
    Ok(())
}

fn check_boot(boot: &Value, allowed: &Value) -> Result<(), Refusal> {
    let boot = boot
        .as_object()
        .ok_or_else(|| Refusal::property("Boot", "PropertyValueTypeError", "Boot is an object"))?;
    for (key, value) in boot {
        let values: &[&str] = match key.as_str() {
            "BootSourceOverrideEnabled" => &["Disabled", "Once", "Continuous"],
            "BootSourceOverrideTarget" => &[],
            "BootSourceOverrideMode" => &["UEFI", "Legacy"],
            _ => {
                return Err(Refusal::property(
                    &format!("Boot/{key}"),
                    "PropertyNotWritable",
                    &format!("Boot.{key} cannot be set"),
                ));
            }
        };
        let ok = if key == "BootSourceOverrideTarget" {
            allowed["BootSourceOverrideTarget@Redfish.AllowableValues"]
                .as_array()
                .is_none_or(|a| a.contains(value))
        } else {
            value.as_str().is_some_and(|v| values.contains(&v))
        };
        if !ok {
            return Err(Refusal::property(
                &format!("Boot/{key}"),
                "PropertyValueNotInList",
                &format!("{value} is not a value Boot.{key} takes"),
            ));
        }
    }
    Ok(())
}

/// The blocks keep within `@Redfish.ResourceBlockLimits`: `MinX` and `MaxX` count the blocks of
/// `ResourceBlockType` X.
fn check_limits(
    blocks: &[String],
    by_path: &BTreeMap<String, Value>,
    limits: &Value,
) -> Result<(), Refusal> {
    for (key, limit) in limits.as_object().into_iter().flatten() {
        let Some(limit) = limit.as_u64() else {
            continue;
        };
        let (at_least, kind) = match (key.strip_prefix("Min"), key.strip_prefix("Max")) {
            (Some(kind), _) => (true, kind),
            (_, Some(kind)) => (false, kind),
            _ => continue,
        };
        let count = blocks
            .iter()
            .filter(|b| {
                by_path[*b]["ResourceBlockType"]
                    .as_array()
                    .is_some_and(|types| types.iter().any(|t| t == kind))
            })
            .count() as u64;
        if (at_least && count < limit) || (!at_least && count > limit) {
            return Err(Refusal::property(
                "Links/ResourceBlocks",
                "PropertyValueOutOfRange",
                &format!(
                    "{count} {kind} blocks: a composed system takes {} {limit} (@Redfish.ResourceBlockLimits {key})",
                    if at_least { "at least" } else { "at most" }
                ),
            ));
        }
    }
    Ok(())
}

/// The `@odata.id`s of a list of links.
fn links(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["@odata.id"].as_str())
        .map(|id| id.trim_end_matches('/').to_owned())
        .collect()
}

fn push_link(list: &mut Value, path: &str) {
    if !list.is_array() {
        *list = json!([]);
    }
    list.as_array_mut()
        .expect("made an array")
        .push(json!({"@odata.id": path}));
}

/// A collection's count is its members'.
fn recount(resource: &mut Value) {
    if let Some(n) = resource["Members"].as_array().map(Vec::len) {
        resource["Members@odata.count"] = json!(n);
    }
}

/// A stable UUID for a composed system's path (version 8: custom), so the same composition
/// reads the same in every run.
fn uuid_for(path: &str) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(path.as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// A Redfish error answer.
#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    id: &'static str,
    message: String,
    related: Vec<String>,
}

impl Refusal {
    fn new(status: StatusCode, id: &'static str) -> Refusal {
        Refusal {
            status,
            id,
            message: String::new(),
            related: Vec::new(),
        }
    }

    fn message(mut self, message: &str) -> Refusal {
        self.message = message.to_owned();
        self
    }

    fn related(mut self, pointer: &str) -> Refusal {
        self.related.push(format!("#/{pointer}"));
        self
    }

    fn property(pointer: &str, id: &'static str, message: &str) -> Refusal {
        Refusal::new(StatusCode::BAD_REQUEST, id)
            .message(message)
            .related(pointer)
    }

    fn malformed(message: &str) -> Refusal {
        Refusal::new(StatusCode::BAD_REQUEST, "MalformedJSON").message(message)
    }

    fn missing(path: &str) -> Refusal {
        Refusal::new(StatusCode::NOT_FOUND, "ResourceMissingAtURI")
            .message(&format!("the resource at {path} was not found"))
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let info = json!({
            "@odata.type": "#Message.v1_1_1.Message",
            "MessageId": format!("Base.1.19.{}", self.id),
            "Message": self.message,
            "RelatedProperties": self.related,
            "Severity": "Warning",
            "MessageSeverity": "Warning",
        });
        let body = json!({"error": {
            "code": format!("Base.1.19.{}", self.id),
            "message": self.message,
            "@Message.ExtendedInfo": [info],
        }});
        (self.status, axum::Json(body)).into_response()
    }
}

/// What the service's requests are answered from.
#[derive(Clone)]
struct Service {
    resources: Arc<Mutex<Resources>>,
    beside: Option<Arc<Beside>>,
}

/// Another Redfish service whose systems stand beside the mockup's.
struct Beside {
    url: String,
    client: reqwest::Client,
}

impl Beside {
    /// The request, as it came, answered by the other service.
    async fn forward(
        &self,
        method: Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Response {
        let target = format!(
            "{}{}",
            self.url,
            uri.path_and_query().map_or(uri.path(), |p| p.as_str())
        );
        let mut request = self.client.request(method, target).body(body.to_vec());
        for name in [header::CONTENT_TYPE, header::ACCEPT] {
            if let Some(value) = headers.get(&name) {
                request = request.header(name, value);
            }
        }
        match request.send().await {
            Ok(answer) => {
                let status = answer.status();
                let mut relayed = HeaderMap::new();
                for name in [header::CONTENT_TYPE, header::LOCATION] {
                    if let Some(value) = answer.headers().get(&name) {
                        relayed.insert(name, value.clone());
                    }
                }
                let bytes = answer.bytes().await.unwrap_or_default();
                (status, relayed, bytes).into_response()
            }
            Err(e) => (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
        }
    }

    /// The members of the other service's collection at `path`.
    async fn members(&self, path: &str) -> Vec<Value> {
        let answer = self.client.get(format!("{}{path}", self.url)).send().await;
        let collection: Value = match answer {
            Ok(answer) => answer.json().await.unwrap_or(Value::Null),
            Err(_) => Value::Null,
        };
        collection["Members"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

/// Whether a request for `path` is the mockup's to answer: the service's own paths, a
/// collection of the mockup, and anything at or under a member the mockup has (its actions,
/// its collections); the rest is the other service's.
fn ours(resources: &Resources, path: &str) -> bool {
    if path == "/redfish" || path == ROOT || path == format!("{ROOT}/$metadata") {
        return true;
    }
    if resources.compose_target().as_deref() == Some(path) {
        return true;
    }
    let mut at = path;
    loop {
        let depth = at.matches('/').count();
        if depth <= 3 {
            // `/redfish/v1/Systems`: the mockup's where asked for itself, not for a member.
            return at == path && resources.get(at).is_some();
        }
        if resources.get(at).is_some() {
            return true;
        }
        at = match at.rsplit_once('/') {
            Some((parent, _)) => parent,
            None => return false,
        };
    }
}

async fn serve(
    State(service): State<Service>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().trim_end_matches('/').to_owned();
    if let Some(beside) = &service.beside {
        let theirs = !ours(
            &service
                .resources
                .lock()
                .expect("composition state poisoned"),
            &path,
        );
        if theirs {
            return beside.forward(method, &uri, &headers, body).await;
        }
        if path == SYSTEMS && method == Method::GET {
            let others = beside.members(SYSTEMS).await;
            let resources = service
                .resources
                .lock()
                .expect("composition state poisoned");
            let mut systems = resources.get(SYSTEMS).cloned().unwrap_or(Value::Null);
            if let Some(members) = systems["Members"].as_array_mut() {
                members.extend(others);
            }
            recount(&mut systems);
            return axum::Json(systems).into_response();
        }
    }
    answer(&service.resources, method, &path, &headers, &body)
}

/// A request the mockup answers, with the state locked for the whole of it.
fn answer(
    state: &Mutex<Resources>,
    method: Method,
    path: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> Response {
    let mut resources = state.lock().expect("composition state poisoned");
    if path == "/redfish" && method == Method::GET {
        return axum::Json(json!({"v1": "/redfish/v1/"})).into_response();
    }
    if path == format!("{ROOT}/$metadata") && method == Method::GET {
        return match &resources.metadata {
            Some(xml) => ([(header::CONTENT_TYPE, "application/xml")], xml.clone()).into_response(),
            None => Refusal::missing(path).into_response(),
        };
    }
    let json_body = || -> Result<Value, Refusal> {
        if headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| !v.starts_with("application/json"))
        {
            return Err(
                Refusal::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType")
                    .message("the body must be application/json"),
            );
        }
        serde_json::from_slice(body)
            .map_err(|e| Refusal::malformed(&format!("the body is not JSON: {e}")))
    };
    if method == Method::GET {
        *resources.reads.entry(path.to_owned()).or_default() += 1;
    }
    let answer = match method {
        Method::GET => match resources.get(path) {
            Some(resource) => Ok(axum::Json(resource.clone()).into_response()),
            None => Err(Refusal::missing(path)),
        },
        Method::POST if path == SYSTEMS => json_body()
            .and_then(|body| resources.compose(&body))
            .map(|(location, system)| {
                (
                    StatusCode::CREATED,
                    [(header::LOCATION, location)],
                    axum::Json(system),
                )
                    .into_response()
            }),
        Method::POST if resources.compose_target().as_deref() == Some(path) => json_body()
            .and_then(|body| resources.compose_action(&body))
            .map(|manifest| {
                axum::Json(json!({
                    "RequestFormat": "Manifest",
                    "RequestType": "Apply",
                    "Manifest": manifest,
                }))
                .into_response()
            }),
        Method::POST if path.ends_with("/Actions/VirtualMedia.InsertMedia") => {
            let slot = path.trim_end_matches("/Actions/VirtualMedia.InsertMedia");
            json_body()
                .and_then(|body| resources.media(slot, true, &body))
                .map(|()| StatusCode::NO_CONTENT.into_response())
        }
        Method::POST if path.ends_with("/Actions/VirtualMedia.EjectMedia") => {
            let slot = path.trim_end_matches("/Actions/VirtualMedia.EjectMedia");
            resources
                .media(slot, false, &Value::Null)
                .map(|()| StatusCode::NO_CONTENT.into_response())
        }
        Method::POST if path.ends_with("/Actions/ComputerSystem.Reset") => {
            let system = path.trim_end_matches("/Actions/ComputerSystem.Reset");
            json_body()
                .and_then(|body| resources.reset(system, &body))
                .map(|()| StatusCode::NO_CONTENT.into_response())
        }
        Method::PATCH if is_system(path) => json_body()
            .and_then(|body| resources.patch_system(path, &body))
            .map(|system| axum::Json(system).into_response()),
        Method::DELETE if is_system(path) => resources
            .decompose(path)
            .map(|()| StatusCode::NO_CONTENT.into_response()),
        _ if resources.get(path).is_none() => Err(Refusal::missing(path)),
        _ => Err(
            Refusal::new(StatusCode::METHOD_NOT_ALLOWED, "OperationNotAllowed")
                .message(&format!("{method} is not allowed on {path}")),
        ),
    };
    answer.unwrap_or_else(IntoResponse::into_response)
}

/// `/redfish/v1/Systems/{id}`.
fn is_system(path: &str) -> bool {
    path.strip_prefix(SYSTEMS)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

/// Copies a mockup folder (`from`) to `to`, to change a copy and leave the mockup as it is.
pub fn copy_mockup(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Changes the JSON document `file` in place.
pub fn edit_json(file: &Path, change: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    change(&mut value);
    std::fs::write(file, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
}

/// The mockup's three illustrations of `ComposedSystem`'s hardware before and after a change
/// (before its blocks were composed, after, after a drive block was added): each describes the
/// compute block's NIC again, with its MAC, as a system of its own.
pub const ILLUSTRATIONS: [&str; 3] = [
    "SystemPreResourceBlock",
    "SystemAfterResourceBlock",
    "SystemAfterAddResourceAction",
];

/// `public-composability` as a service Podium discovers: the mockup but for its
/// [`ILLUSTRATIONS`], left out of the `Systems` collection (a service holds a NIC once, and
/// Podium refuses a discovery where two systems report one MAC). A copy, in a folder that goes
/// when dropped.
pub fn composable() -> tempfile::TempDir {
    let folder = tempfile::tempdir().expect("a temporary folder");
    copy_mockup(&mockup("public-composability"), folder.path());
    edit_json(&folder.path().join("Systems/index.json"), |c| {
        let members = c["Members"].as_array_mut().expect("the members");
        members.retain(|m| {
            !ILLUSTRATIONS
                .iter()
                .any(|s| m["@odata.id"] == format!("/redfish/v1/Systems/{s}"))
        });
    });
    folder
}
