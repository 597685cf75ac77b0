//! Calls to hardware-driver plugins: discovery, inspection, power, boot and virtual media. What
//! a driver reports is checked (`validate.rs`) and turned into the host's types (`system.rs`).

use podium_types::{
    ApplyTime, Bios, BiosChange, BiosValue, BootSettings, FirmwareComponent, FirmwareUpdate,
    HardwareInventory, MediaRequest, MediaType, PowerAction, PowerState, SecureBoot, TaskStatus,
};

use super::super::bindings::{
    wit_composition, wit_driver as wd, wit_exchange as wx, wit_firmware, wit_settings as ws,
};
use super::super::system::{Capabilities, Chassis, CompositionService, ServiceInfo, System};
use super::super::{Contract, Plugin, Pre, Runtime};
use super::exchange::{self, expect};
use super::{Bounds, CallContext, CallError, PluginError, Prepared, clip, plugin_err};

/// `call_export!` of this call's plugin, a hardware driver.
macro_rules! driver_export {
    (bounds = $bounds:expr, $call:ident, |$b:ident, $s:ident| $e:expr) => {
        call_export!(
            bounds = $bounds,
            $call.runtime,
            &$call.plugin,
            $call.context,
            Driver,
            "hardware-driver",
            |$b, $s| $e
        )
    };
    ($call:ident, |$b:ident, $s:ident| $e:expr) => {
        call_export!(
            $call.runtime,
            &$call.plugin,
            $call.context,
            Driver,
            "hardware-driver",
            |$b, $s| $e
        )
    };
}

impl Runtime {
    /// A call to a hardware driver, bound to its configuration and endpoint.
    pub fn driver(&self, plugin: &Plugin, context: CallContext) -> DriverCall<'_> {
        DriverCall {
            runtime: self,
            plugin: plugin.clone(),
            context,
        }
    }
}

/// One call to a hardware-driver plugin. Each method consumes it: one call, one instance (0.1.0),
/// or one exchange of steps, an instance each (0.2.0: `exchange.rs`); which, the plugin's
/// contract says, and nothing above this type sees it.
#[derive(Debug)]
pub struct DriverCall<'a> {
    runtime: &'a Runtime,
    plugin: Plugin,
    context: CallContext,
}

/// The 0.2.0 outcome a call must finish with: `finished!(self, bounds, call, Case, "case")` runs
/// the exchange and takes `outcome::Case(value)`, or `finished!(.., Done)`.
///
/// The exchange is boxed: a call's future is as large as the largest path it may take, and a
/// running operation holds its call's future for as long as the BMC takes to answer.
macro_rules! finished {
    ($call:ident, $bounds:expr, $wit_call:expr, Done) => {
        expect(
            Box::pin(exchange::run(
                $call.runtime,
                &$call.plugin,
                $call.context,
                $bounds,
                $wit_call,
            ))
            .await?,
            "done",
            |o| match o {
                wx::Outcome::Done => Some(()),
                _ => None,
            },
        )?
    };
    ($call:ident, $bounds:expr, $wit_call:expr, $case:ident, $name:literal) => {
        expect(
            Box::pin(exchange::run(
                $call.runtime,
                &$call.plugin,
                $call.context,
                $bounds,
                $wit_call,
            ))
            .await?,
            $name,
            |o| match o {
                wx::Outcome::$case(value) => Some(value),
                _ => None,
            },
        )?
    };
}

impl DriverCall<'_> {
    /// Whether the driver is sans-IO (0.2.0 and later): its calls are exchanges of steps.
    fn exchanges(&self) -> bool {
        self.plugin.contract() >= Contract::V0_2_0
    }

    pub async fn capabilities(self) -> Result<Capabilities, CallError> {
        let caps = match self.plugin.contract() {
            Contract::V0_3_0 => {
                call_export!(
                    self.runtime,
                    &self.plugin,
                    self.context,
                    Exchange,
                    "hardware-driver",
                    |b, s| b.podium_plugin_driver().call_capabilities(s)
                )
                .1
            }
            Contract::V0_2_0 => {
                call_export!(
                    self.runtime,
                    &self.plugin,
                    self.context,
                    Exchange0_2,
                    "hardware-driver",
                    |b, s| b.podium_plugin_driver().call_capabilities(s)
                )
                .1
            }
            Contract::V0_1_0 => {
                driver_export!(self, |b, s| b.podium_plugin_driver().call_capabilities(s)).1
            }
        };
        Ok(Capabilities {
            discover: caps.contains(wd::CapabilitySet::DISCOVER),
            power: caps.contains(wd::CapabilitySet::POWER),
            boot_override: caps.contains(wd::CapabilitySet::BOOT_OVERRIDE),
            virtual_media: caps.contains(wd::CapabilitySet::VIRTUAL_MEDIA),
        })
    }

    pub async fn probe(self) -> Result<ServiceInfo, CallError> {
        let (label, result) = if self.exchanges() {
            finished!(
                self,
                Bounds::Call,
                wx::Call::Probe,
                ServiceInfo,
                "service-info"
            )
        } else {
            driver_export!(self, |b, s| b.podium_plugin_driver().call_probe(s))
        };
        let info = result.map_err(plugin_err(label.clone()))?;
        let malformed = |reason: String| CallError::Malformed {
            plugin: label.clone(),
            reason,
        };
        if !(info.root_link.starts_with('/') || url::Url::parse(&info.root_link).is_ok())
            || info.root_link.len() > 2048
        {
            return Err(malformed(format!(
                "probe returned a root link that is neither a path nor a URL: `{}`",
                clip(info.root_link, 64)
            )));
        }
        Ok(ServiceInfo {
            root_link: info.root_link,
            product: info.product.map(|s| clip(s, 256)),
            version: info.version.map(|s| clip(s, 64)),
        })
    }

    /// Every system behind the endpoint, under the longer `discover_timeout`.
    pub async fn discover(self) -> Result<Vec<System>, CallError> {
        let (label, result) = if self.exchanges() {
            finished!(
                self,
                Bounds::Discovery,
                wx::Call::Discover,
                Systems,
                "systems"
            )
        } else {
            driver_export!(bounds = Bounds::Discovery, self, |b, s| b
                .podium_plugin_driver()
                .call_discover(s))
        };
        let systems = result.map_err(plugin_err(label.clone()))?;
        super::super::validate::systems(systems).map_err(|reason| CallError::Malformed {
            plugin: label,
            reason,
        })
    }

    /// Every chassis behind the endpoint, with the systems each holds, under `discover`'s bounds.
    /// A 0.1.0 driver knows no chassis: `unsupported`, as a 0.2.0 driver without them answers.
    pub async fn discover_chassis(self) -> Result<Vec<Chassis>, CallError> {
        self.since(Contract::V0_2_0, "chassis")?;
        let (label, result) = finished!(
            self,
            Bounds::Discovery,
            wx::Call::DiscoverChassis,
            Chassis,
            "chassis"
        );
        let chassis = result.map_err(plugin_err(label.clone()))?;
        super::super::validate::chassis(chassis).map_err(|reason| CallError::Malformed {
            plugin: label,
            reason,
        })
    }

    /// A call new in `contract`: a driver of an earlier one has no `what` (chassis, composition,
    /// chassis power), so the call is `unsupported` without running it.
    fn since(&self, contract: Contract, what: &str) -> Result<(), CallError> {
        let has = self.plugin.contract();
        if has >= contract {
            return Ok(());
        }
        Err(CallError::Plugin {
            plugin: self.plugin.label(),
            error: PluginError::Unsupported(format!("{what}: a {has} driver has none")),
        })
    }

    /// The composition service behind the endpoint: its resource blocks, zones and limits,
    /// under `discover`'s bounds. `unsupported` where it composes nothing.
    pub async fn read_composition(self) -> Result<CompositionService, CallError> {
        self.since(Contract::V0_2_0, "composition")?;
        let (label, result) = finished!(
            self,
            Bounds::Discovery,
            wx::Call::ReadComposition,
            Composition,
            "composition"
        );
        let service = result.map_err(plugin_err(label.clone()))?;
        super::super::validate::composition(service).map_err(|reason| CallError::Malformed {
            plugin: label,
            reason,
        })
    }

    /// Composes a system named `name` of the blocks `blocks` (their ids); answers the system's
    /// id, as `discover` reports it.
    pub async fn compose(self, name: &str, blocks: &[String]) -> Result<String, CallError> {
        self.since(Contract::V0_2_0, "composition")?;
        let request = wit_composition::ComposeRequest {
            name: name.to_owned(),
            blocks: blocks.to_vec(),
        };
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::Compose(request),
            Composed,
            "composed"
        );
        let id = result.map_err(plugin_err(label.clone()))?;
        super::super::validate::system_id("composed", &id).map_err(|reason| {
            CallError::Malformed {
                plugin: label,
                reason,
            }
        })?;
        Ok(id)
    }

    /// Decomposes the composed system `system_id`, freeing its blocks.
    pub async fn decompose(self, system_id: &str) -> Result<(), CallError> {
        self.since(Contract::V0_2_0, "composition")?;
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::Decompose(system_id.to_owned()),
            Done
        );
        result.map_err(plugin_err(label))
    }

    /// A system's BIOS: its attributes, their registry, what is staged. `unsupported` where the
    /// BMC has no BIOS resource (and from a 0.1.0 driver).
    pub async fn read_bios(self, system_id: &str) -> Result<Bios, CallError> {
        self.since(Contract::V0_2_0, "BIOS settings")?;
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::ReadBios(system_id.to_owned()),
            Bios,
            "bios"
        );
        let bios = result.map_err(plugin_err(label.clone()))?;
        super::super::validate::bios(bios).map_err(|reason| CallError::Malformed {
            plugin: label,
            reason,
        })
    }

    /// Stages a change of BIOS attributes (checked against the registry by the caller).
    pub async fn set_bios(self, system_id: &str, change: &BiosChange) -> Result<(), CallError> {
        self.since(Contract::V0_2_0, "BIOS settings")?;
        let change = ws::BiosChange {
            attributes: change
                .attributes
                .iter()
                .map(|(name, value)| ws::Attribute {
                    name: name.clone(),
                    value: Some(match value {
                        BiosValue::Text(t) => ws::AttributeValue::Text(t.clone()),
                        BiosValue::Integer(i) => ws::AttributeValue::Integer(*i),
                        BiosValue::Boolean(b) => ws::AttributeValue::Boolean(*b),
                    }),
                })
                .collect(),
            apply_time: change.apply_time.map(|t| match t {
                ApplyTime::Immediate => ws::ApplyTime::Immediate,
                ApplyTime::OnReset => ws::ApplyTime::OnReset,
                ApplyTime::AtMaintenanceWindowStart => ws::ApplyTime::AtMaintenanceWindowStart,
                ApplyTime::InMaintenanceWindowOnReset => ws::ApplyTime::InMaintenanceWindowOnReset,
            }),
        };
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::SetBios((system_id.to_owned(), change)),
            Done
        );
        result.map_err(plugin_err(label))
    }

    /// Resets a system's BIOS attributes to their defaults.
    pub async fn reset_bios(self, system_id: &str) -> Result<(), CallError> {
        self.since(Contract::V0_2_0, "BIOS settings")?;
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::ResetBios(system_id.to_owned()),
            Done
        );
        result.map_err(plugin_err(label))
    }

    /// A system's secure boot. `unsupported` where the BMC has none for it.
    pub async fn read_secure_boot(self, system_id: &str) -> Result<SecureBoot, CallError> {
        self.since(Contract::V0_2_0, "secure boot")?;
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::ReadSecureBoot(system_id.to_owned()),
            SecureBoot,
            "secure-boot"
        );
        let state = result.map_err(plugin_err(label.clone()))?;
        super::super::validate::secure_boot(state).map_err(|reason| CallError::Malformed {
            plugin: label,
            reason,
        })
    }

    /// A system's full inventory: processors, memory, storage, NICs and their link.
    pub async fn read_hardware(self, system_id: &str) -> Result<HardwareInventory, CallError> {
        self.since(Contract::V0_2_0, "the full inventory")?;
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::ReadHardware(system_id.to_owned()),
            Hardware,
            "hardware"
        );
        let inventory = result.map_err(plugin_err(label.clone()))?;
        super::super::validate::hardware(inventory).map_err(|reason| CallError::Malformed {
            plugin: label,
            reason,
        })
    }

    /// A system's firmware components. `unsupported` where the BMC reports none.
    pub async fn read_firmware(self, system_id: &str) -> Result<Vec<FirmwareComponent>, CallError> {
        self.since(Contract::V0_2_0, "firmware")?;
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::ReadFirmware(system_id.to_owned()),
            Firmware,
            "firmware"
        );
        let components = result.map_err(plugin_err(label.clone()))?;
        super::super::validate::firmware(components).map_err(|reason| CallError::Malformed {
            plugin: label,
            reason,
        })
    }

    /// Starts a firmware update: the task the BMC runs it as, or `None` where it is done.
    pub async fn update_firmware(
        self,
        system_id: &str,
        update: &FirmwareUpdate,
    ) -> Result<Option<String>, CallError> {
        self.since(Contract::V0_2_0, "firmware updates")?;
        let update = wit_firmware::FirmwareUpdate {
            image_url: update.image_url.clone(),
            targets: update.targets.clone(),
        };
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::UpdateFirmware((system_id.to_owned(), update)),
            TaskStarted,
            "task-started"
        );
        let task = result.map_err(plugin_err(label.clone()))?;
        if let Some(task) = &task {
            super::super::validate::task_reference(task).map_err(|reason| {
                CallError::Malformed {
                    plugin: label,
                    reason,
                }
            })?;
        }
        Ok(task)
    }

    /// Where a firmware update's task stands.
    pub async fn read_task(self, system_id: &str, task: &str) -> Result<TaskStatus, CallError> {
        self.since(Contract::V0_2_0, "firmware updates")?;
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::ReadTask((system_id.to_owned(), task.to_owned())),
            Task,
            "task"
        );
        let status = result.map_err(plugin_err(label.clone()))?;
        super::super::validate::task(status).map_err(|reason| CallError::Malformed {
            plugin: label,
            reason,
        })
    }

    /// Turns secure boot on or off, from the next boot on.
    pub async fn set_secure_boot(self, system_id: &str, enabled: bool) -> Result<(), CallError> {
        self.since(Contract::V0_2_0, "secure boot")?;
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::SetSecureBoot((system_id.to_owned(), enabled)),
            Done
        );
        result.map_err(plugin_err(label))
    }

    /// One system's inventory, checked as `discover`'s are; it must be the system asked for.
    pub async fn inspect(self, system_id: &str) -> Result<System, CallError> {
        let id = system_id.to_owned();
        let (label, result) = if self.exchanges() {
            finished!(self, Bounds::Call, wx::Call::Inspect(id), System, "system")
        } else {
            driver_export!(self, |b, s| b.podium_plugin_driver().call_inspect(s, &id))
        };
        let system = result.map_err(plugin_err(label.clone()))?;
        let malformed = |reason: String| CallError::Malformed {
            plugin: label.clone(),
            reason,
        };
        if system.id != system_id {
            return Err(malformed(format!(
                "system.id `{}` is not the system asked for (`{}`)",
                clip(system.id, 64),
                clip(system_id.to_owned(), 64)
            )));
        }
        let mut checked = super::super::validate::systems(vec![system])
            .map_err(|reason| malformed(reason.replacen("systems[0]", "system", 1)))?;
        Ok(checked.remove(0))
    }

    pub async fn get_power(self, system_id: &str) -> Result<PowerState, CallError> {
        let id = system_id.to_owned();
        let (label, result) = if self.exchanges() {
            finished!(self, Bounds::Call, wx::Call::GetPower(id), Power, "power")
        } else {
            driver_export!(self, |b, s| b.podium_plugin_driver().call_get_power(s, &id))
        };
        result.map(PowerState::from).map_err(plugin_err(label))
    }

    pub async fn set_power(self, system_id: &str, action: PowerAction) -> Result<(), CallError> {
        let id = system_id.to_owned();
        let (label, result) = if self.exchanges() {
            finished!(
                self,
                Bounds::Call,
                wx::Call::SetPower((id, action.into())),
                Done
            )
        } else {
            driver_export!(self, |b, s| b.podium_plugin_driver().call_set_power(
                s,
                &id,
                action.into()
            ))
        };
        result.map_err(plugin_err(label))
    }

    /// A chassis' own power state, by the id `discover_chassis` reported. New in 0.3.0.
    pub async fn get_chassis_power(self, chassis_id: &str) -> Result<PowerState, CallError> {
        self.since(Contract::V0_3_0, "chassis power")?;
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::GetChassisPower(chassis_id.to_owned()),
            Power,
            "power"
        );
        result.map(PowerState::from).map_err(plugin_err(label))
    }

    /// Powers a chassis on or off, or restarts it. New in 0.3.0.
    pub async fn set_chassis_power(
        self,
        chassis_id: &str,
        action: PowerAction,
    ) -> Result<(), CallError> {
        self.since(Contract::V0_3_0, "chassis power")?;
        let (label, result) = finished!(
            self,
            Bounds::Call,
            wx::Call::SetChassisPower((chassis_id.to_owned(), action.into())),
            Done
        );
        result.map_err(plugin_err(label))
    }

    pub async fn set_boot_override(
        self,
        system_id: &str,
        settings: BootSettings,
    ) -> Result<(), CallError> {
        let id = system_id.to_owned();
        let settings: wd::BootSettings = settings.into();
        let (label, result) = if self.exchanges() {
            finished!(
                self,
                Bounds::Call,
                wx::Call::SetBootOverride((id, settings)),
                Done
            )
        } else {
            driver_export!(self, |b, s| b
                .podium_plugin_driver()
                .call_set_boot_override(s, &id, settings))
        };
        result.map_err(plugin_err(label))
    }

    pub async fn insert_media(
        self,
        system_id: &str,
        request: MediaRequest,
    ) -> Result<(), CallError> {
        let id = system_id.to_owned();
        let request = wd::MediaRequest {
            image_url: request.image_url,
            media_type: request.media_type.into(),
            write_protected: request.write_protected,
        };
        let (label, result) = if self.exchanges() {
            finished!(
                self,
                Bounds::Call,
                wx::Call::InsertMedia((id, request)),
                Done
            )
        } else {
            driver_export!(self, |b, s| b
                .podium_plugin_driver()
                .call_insert_media(s, &id, &request))
        };
        result.map_err(plugin_err(label))
    }

    pub async fn eject_media(
        self,
        system_id: &str,
        media_type: MediaType,
    ) -> Result<(), CallError> {
        let id = system_id.to_owned();
        let (label, result) = if self.exchanges() {
            finished!(
                self,
                Bounds::Call,
                wx::Call::EjectMedia((id, media_type.into())),
                Done
            )
        } else {
            driver_export!(self, |b, s| b.podium_plugin_driver().call_eject_media(
                s,
                &id,
                media_type.into()
            ))
        };
        result.map_err(plugin_err(label))
    }
}
