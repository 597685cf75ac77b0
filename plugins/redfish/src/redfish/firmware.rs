//! Firmware: what the `UpdateService`'s `FirmwareInventory` lists for a system (else the system's
//! `BiosVersion` and its managers' `FirmwareVersion`, which is all some BMCs say, sushy-tools
//! among them), an update with `UpdateService.SimpleUpdate`, and the task the service runs it as.

use futures::future::join_all;
use podium_plugin::driver::{
    ComponentKind, FirmwareComponent, FirmwareUpdate, TaskState, TaskStatus,
};
use podium_plugin::http::{Method, Request};
use podium_plugin::{Error, ErrorExt, log};
use serde_json::{Value, json};

use super::{Client, check_system_id, link_ids, link_path, url_path};
use crate::error::{self, UrlSource};
use crate::model::{ComputerSystem, Manager, ServiceRoot, SoftwareInventory, Task, UpdateService};

/// The most `FirmwareInventory` members one read looks at.
const INVENTORY_READS: usize = 256;
/// The most task messages kept, and the longest.
const MESSAGES: usize = 64;
const MESSAGE_CHARS: usize = 256;
/// The longest name or version kept, in characters (the host takes 256 bytes).
const TEXT_CHARS: usize = 64;

impl Client {
    /// A system's firmware components.
    pub(crate) async fn read_firmware(
        &self,
        system_id: &str,
    ) -> Result<Vec<FirmwareComponent>, Error> {
        check_system_id(system_id)?;
        let (system, service) = futures::join!(
            self.get::<ComputerSystem>(system_id, UrlSource::Caller),
            self.update_service(),
        );
        let system = system?;
        // An update service that cannot be read takes no update, and lists nothing.
        let service = match service {
            Ok(service) => service.map(|(_, s)| s),
            Err(e) => {
                log::warn(&format!(
                    "the update service cannot be read, so no component shows as updateable: {e}"
                ));
                None
            }
        };
        let updates = service
            .as_ref()
            .and_then(|s| s.actions.as_ref())
            .and_then(|a| a.simple_update.as_ref())
            .is_some();
        let links = system.links.as_ref();
        let managers = link_ids(links.and_then(|l| l.managed_by.clone()));
        let chassis = link_ids(links.and_then(|l| l.chassis.clone()));
        if let Some(link) = service.as_ref().and_then(|s| s.firmware_inventory.as_ref()) {
            let listed = self
                .inventory(link, system_id, &managers, &chassis, updates)
                .await;
            match listed {
                Ok(mut components) if !components.is_empty() => {
                    // The running BIOS first (an inventory may also list the image before it,
                    // or one staged): the one whose version the system reports.
                    let running = |c: &FirmwareComponent| {
                        c.kind == ComponentKind::Bios
                            && c.version.is_some()
                            && c.version
                                == system.bios_version.as_deref().map(|v| plain(v, TEXT_CHARS))
                    };
                    components.sort_by_key(|c| !running(c));
                    return Ok(components);
                }
                Ok(_) => {}
                // A service that links an inventory it does not serve (sushy-tools) says only
                // the versions.
                Err(e) if matches!(e, Error::NotFound(_)) => log::info(&format!(
                    "no firmware inventory, so the system's BIOS and BMC versions are shown: {e}"
                )),
                Err(e) => log::warn(&format!(
                    "the firmware inventory cannot be read, so the system's BIOS and BMC \
                     versions are shown: {e}"
                )),
            }
        }
        let mut components = Vec::new();
        if let Some(version) = system.bios_version {
            components.push(FirmwareComponent {
                id: system_id.to_owned(),
                name: "BIOS".into(),
                kind: ComponentKind::Bios,
                version: Some(plain(&version, TEXT_CHARS)),
                updateable: updates,
            });
        }
        let read = join_all(
            managers
                .iter()
                .map(|m| self.get::<Manager>(m, UrlSource::Service)),
        )
        .await;
        for (path, manager) in managers.iter().zip(read) {
            match manager {
                Ok(Manager {
                    firmware_version: Some(version),
                    name,
                    ..
                }) => components.push(FirmwareComponent {
                    id: path.clone(),
                    name: plain(name.as_deref().unwrap_or("BMC"), TEXT_CHARS),
                    kind: ComponentKind::Bmc,
                    version: Some(plain(&version, TEXT_CHARS)),
                    updateable: updates,
                }),
                Ok(_) => {}
                Err(e) => log::warn(&format!("{path}: its firmware version is not shown: {e}")),
            }
        }
        if components.is_empty() {
            return Err(Error::Unsupported(format!(
                "firmware: {system_id} has no firmware inventory, BIOS version or manager \
                 firmware version"
            )));
        }
        Ok(components)
    }

    /// The `FirmwareInventory`'s members that belong to the system: those related to it (or to
    /// a part of it), to its managers or chassis, or to nothing named.
    async fn inventory(
        &self,
        link: &crate::model::Link,
        system_id: &str,
        managers: &[String],
        chassis: &[String],
        updates: bool,
    ) -> Result<Vec<FirmwareComponent>, Error> {
        let path = link_path(link, "UpdateService: FirmwareInventory")?;
        let mut members = self.members(&path).await?;
        if members.len() > INVENTORY_READS {
            log::warn(&format!(
                "{path}: {} members, of which the first {INVENTORY_READS} are read",
                members.len()
            ));
            members.truncate(INVENTORY_READS);
        }
        let read = join_all(
            members
                .iter()
                .map(|m| self.get::<SoftwareInventory>(m, UrlSource::Service)),
        )
        .await;
        let trim = |p: &str| p.trim_end_matches('/').to_owned();
        let system = trim(system_id);
        let within = |item: &str, of: &str| item == of || item.starts_with(&format!("{of}/"));
        let mut components = Vec::new();
        for (member, item) in members.iter().zip(read) {
            let item = match item {
                Ok(item) => item,
                Err(e) => {
                    log::warn(&format!("{member}: left out of the firmware shown: {e}"));
                    continue;
                }
            };
            let related: Vec<String> = link_ids(item.related_item.clone())
                .iter()
                .map(|p| trim(p))
                .collect();
            let to_manager = related
                .iter()
                .any(|r| managers.iter().any(|m| within(r, &trim(m))));
            let ours = related.is_empty()
                || to_manager
                || related
                    .iter()
                    .any(|r| within(r, &system) || chassis.iter().any(|c| within(r, &trim(c))));
            if !ours {
                continue;
            }
            let id = item.odata_id.clone().unwrap_or_else(|| member.clone());
            let name = item
                .name
                .clone()
                .or_else(|| item.id.clone())
                .unwrap_or_else(|| id.clone());
            let words =
                format!("{} {}", item.id.as_deref().unwrap_or_default(), name).to_ascii_lowercase();
            let kind =
                if related.contains(&system) || words.contains("bios") || words.contains("uefi") {
                    ComponentKind::Bios
                } else if to_manager || words.contains("bmc") {
                    ComponentKind::Bmc
                } else if related.iter().any(|r| r.contains("/NetworkAdapters/"))
                    || words
                        .split(|c: char| !c.is_ascii_alphanumeric())
                        .any(|w| w == "nic")
                    || words.contains("ethernet")
                    || words.contains("network")
                {
                    ComponentKind::Nic
                } else {
                    ComponentKind::Other
                };
            components.push(FirmwareComponent {
                id,
                name: plain(&name, TEXT_CHARS),
                kind,
                version: item.version.map(|v| plain(&v, TEXT_CHARS)),
                updateable: updates && item.updateable.unwrap_or(false),
            });
        }
        Ok(components)
    }

    /// The service's `UpdateService` and where it is; `None` where the root links none.
    async fn update_service(&self) -> Result<Option<(String, UpdateService)>, Error> {
        let root_path = &self.config.root;
        let root: ServiceRoot = self.get(root_path, UrlSource::Service).await?;
        let Some(link) = root.update_service else {
            return Ok(None);
        };
        let path = link_path(&link, &format!("GET {root_path}: UpdateService"))?;
        let service = self.get(&path, UrlSource::Service).await?;
        Ok(Some((path, service)))
    }

    /// POSTs `UpdateService.SimpleUpdate`: the task the service answers (the `@odata.id` of a
    /// `Task` in the body, else the `Location` it answers, a task monitor), or `None` where it
    /// answers neither (done).
    pub(crate) async fn update_firmware(
        &self,
        system_id: &str,
        update: &FirmwareUpdate,
    ) -> Result<Option<String>, Error> {
        check_system_id(system_id)?;
        let Some((path, service)) = self.update_service().await? else {
            return Err(Error::Unsupported(
                "firmware updates: the service links no UpdateService".into(),
            ));
        };
        let Some(action) = service.actions.and_then(|a| a.simple_update) else {
            return Err(Error::Unsupported(format!(
                "firmware updates: {path} offers no UpdateService.SimpleUpdate"
            )));
        };
        let target = action.target.unwrap_or_else(|| {
            format!(
                "{}/Actions/UpdateService.SimpleUpdate",
                path.trim_end_matches('/')
            )
        });
        let mut body = json!({
            "ImageURI": update.image_url,
            "Targets": update.targets,
        });
        // The scheme as a `TransferProtocol`, where the action lists it among those it takes.
        let scheme = update
            .image_url
            .split_once("://")
            .map(|(s, _)| s.to_ascii_uppercase());
        if let Some(scheme) = scheme
            && action
                .transfer_protocols
                .is_some_and(|allowed| allowed.contains(&scheme))
        {
            body["TransferProtocol"] = json!(scheme);
        }
        let (location, answer) = self.post_for_answer(url_path(&target), &body).await?;
        let task = serde_json::from_slice::<Value>(&answer)
            .ok()
            .filter(|v| {
                v.get("TaskState").is_some()
                    || v["@odata.type"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("#Task."))
            })
            .and_then(|v| v["@odata.id"].as_str().map(|t| url_path(t).to_owned()));
        Ok(task.or(location))
    }

    /// Where a task stands: a `Task`'s `TaskState`, or a task monitor's answer (202 while the
    /// task runs, the operation's own answer once it is done).
    pub(crate) async fn read_task(&self, system_id: &str, task: &str) -> Result<TaskStatus, Error> {
        check_system_id(system_id)?;
        check_system_id(task).map_err(|_| {
            Error::InvalidInput(format!(
                "task: expected a Redfish path, found {:?}",
                podium_plugin::truncate(task)
            ))
        })?;
        let response = Request::get(task)
            .header("Accept", "application/json")
            .header("OData-Version", "4.0")
            .send()
            .await
            .map_err(|e| error::from_transport(Method::Get, task, UrlSource::Caller, e))?;
        if !(200..300).contains(&response.status) {
            return Err(Error::from_status(
                Method::Get,
                task,
                response.status,
                &response.body,
            ));
        }
        let parsed: Option<Task> = serde_json::from_slice::<Value>(&response.body)
            .ok()
            .filter(|v| v.get("TaskState").is_some())
            .and_then(|v| serde_json::from_value(v).ok());
        let Some(parsed) = parsed else {
            let state = if response.status == 202 {
                TaskState::Running
            } else {
                TaskState::Completed
            };
            return Ok(TaskStatus {
                state,
                percent: None,
                messages: Vec::new(),
            });
        };
        Ok(task_status(parsed))
    }
}

/// A `Task` as the host sees it: `Exception`, `Killed` and `Cancelled` (and a `Completed` task
/// whose status is `Critical`) failed, `Completed` done, any other state running.
pub(crate) fn task_status(task: Task) -> TaskStatus {
    let critical = task.task_status.as_deref() == Some("Critical");
    let state = match task.task_state.as_deref() {
        Some("Completed") if critical => TaskState::Failed,
        Some("Completed") => TaskState::Completed,
        Some("Exception" | "Killed" | "Cancelled") => TaskState::Failed,
        _ => TaskState::Running,
    };
    let mut messages: Vec<String> = task
        .messages
        .into_iter()
        .flatten()
        .filter_map(|m| m.message)
        .map(|m| plain(&m, MESSAGE_CHARS))
        .filter(|m| !m.trim().is_empty())
        .collect();
    if messages.len() > MESSAGES {
        messages.drain(..messages.len() - MESSAGES);
    }
    TaskStatus {
        state,
        percent: task
            .percent_complete
            .filter(|p| p.is_finite())
            .map(|p| p.clamp(0.0, 100.0) as u8),
        messages,
    }
}

/// Text a BMC sent, as the host takes it: controls as spaces, the characters that change how
/// text reads without showing (bidirectional overrides, zero-width characters) left out, at most
/// `max` characters.
fn plain(text: &str, max: usize) -> String {
    text.chars()
        .filter(|c| {
            !matches!(c,
                '\u{00AD}' | '\u{061C}' | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}')
        })
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(max)
        .collect()
}
