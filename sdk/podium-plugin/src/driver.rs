//! The `hardware-driver` world: power, boot and inventory of machines through their BMC, as a
//! `podium:plugin@0.3.0` driver: each method is an `async fn` whose requests the host sends
//! between steps ([`exchange`](crate::exchange)).

use std::marker::PhantomData;

use crate::exchange::{self, Step};
use crate::http::{HttpError, Response};
use crate::wit::exchange::exports::podium::plugin::{driver, plugin};
use crate::{Error, Plugin, PluginInfo, Result};

pub use crate::wit::exchange::exports::podium::plugin::driver::{Call, Outcome};

pub use crate::wit::hardware_driver::exports::podium::plugin::driver::{
    BootMode, BootPersistence, BootSettings, BootTarget, CapabilitySet, MediaRequest, MediaSlot,
    MediaType, Nic, PowerAction, PowerState, ServiceInfo, System, SystemKind,
};

/// The component tree: chassis, new in `podium:plugin@0.2.0`.
pub use crate::wit::exchange::podium::plugin::components::{Chassis, ChassisType, Health};
/// Composition, new in `podium:plugin@0.2.0`.
pub use crate::wit::exchange::podium::plugin::composition::{
    BlockLimit, BlockType, ComposeRequest, CompositionService, CompositionState, ResourceBlock,
    ResourceZone,
};
/// Firmware, new in `podium:plugin@0.2.0`.
pub use crate::wit::exchange::podium::plugin::firmware::{
    ComponentKind, FirmwareComponent, FirmwareUpdate, TaskState, TaskStatus,
};
/// The full inventory, new in `podium:plugin@0.2.0`.
pub use crate::wit::exchange::podium::plugin::inventory::{
    Drive, HardwareInventory, LinkState, MemoryModule, NicLink, Processor, StorageController,
};
/// BIOS settings, new in `podium:plugin@0.2.0`.
pub use crate::wit::exchange::podium::plugin::settings::{
    ApplyTime, Attribute, AttributeEntry, AttributeType, AttributeValue, Bios, BiosChange,
    SecureBoot,
};

/// A hardware driver. Every call builds the plugin from the pod manager's configuration
/// ([`Plugin::from_config`]) and then calls one method; nothing is kept between calls, nor
/// between the steps of one (each step builds the plugin again and replays the method: it must
/// send the same requests given the same answers, see [`exchange`](crate::exchange)).
///
/// Idempotency the host expects: `probe`, `discover`, `inspect`, `get_power`,
/// `discover_chassis`, `read_composition`, `read_bios`, `read_secure_boot`, `read_hardware`,
/// `read_firmware`, `read_task` and `get_chassis_power` change nothing;
/// `set_power`, `set_boot_override`, `insert_media`, `eject_media` and `set_chassis_power` may be
/// called again after a failure or a crash and must then do no harm (powering on a machine that
/// is on succeeds, inserting the image already inserted succeeds). `update_firmware` is the one the host never
/// calls twice for one update: it keeps the task it answered and follows that.
///
/// The methods with a default answer `unsupported`: leave them out of [`capabilities`] too.
///
/// [`capabilities`]: HardwareDriver::capabilities
#[allow(
    async_fn_in_trait,
    reason = "the SDK drives these futures on one thread; no caller needs them Send"
)]
pub trait HardwareDriver: Plugin {
    /// What this driver can do.
    fn capabilities() -> CapabilitySet;

    /// Checks that the endpoint answers and accepts the credentials.
    async fn probe(&self) -> Result<ServiceInfo>;

    /// Every system (and chassis, where reported) behind the endpoint, with its inventory.
    async fn discover(&self) -> Result<Vec<System>>;

    /// The inventory of one system `discover` reported; `not-found` when it is gone.
    async fn inspect(&self, system_id: &str) -> Result<System>;

    async fn get_power(&self, system_id: &str) -> Result<PowerState>;

    async fn set_power(&self, system_id: &str, action: PowerAction) -> Result<()> {
        let _ = (system_id, action);
        Err(unsupported::<Self>("power control"))
    }

    async fn set_boot_override(&self, system_id: &str, settings: BootSettings) -> Result<()> {
        let _ = (system_id, settings);
        Err(unsupported::<Self>("boot override"))
    }

    /// Inserts an image into a free slot that takes `request.media_type`.
    async fn insert_media(&self, system_id: &str, request: MediaRequest) -> Result<()> {
        let _ = (system_id, request);
        Err(unsupported::<Self>("virtual media"))
    }

    /// Ejects whatever is inserted in the slots that take `media_type`.
    async fn eject_media(&self, system_id: &str, media_type: MediaType) -> Result<()> {
        let _ = (system_id, media_type);
        Err(unsupported::<Self>("virtual media"))
    }

    /// Every chassis behind the endpoint (racks, enclosures, blades), each with the chassis it
    /// stands in and the systems it holds, by the ids [`discover`](Self::discover) reports. Read
    /// as `discover` is, under its bounds; it changes nothing.
    async fn discover_chassis(&self) -> Result<Vec<Chassis>> {
        Err(unsupported::<Self>("chassis"))
    }

    /// The composition service: its resource blocks (what each holds, its state, its zones),
    /// its zones, the zones it composes in and its limits. Read as `discover` is.
    async fn read_composition(&self) -> Result<CompositionService> {
        Err(unsupported::<Self>("composition"))
    }

    /// Composes a system of the blocks asked for; answers its id, as `discover` will report it.
    /// A block composed meanwhile is [`Error::Conflict`] naming it. Not idempotent at the BMC:
    /// the host runs it once, and reads the service again before trying anew.
    async fn compose(&self, request: ComposeRequest) -> Result<String> {
        let _ = request;
        Err(unsupported::<Self>("composition"))
    }

    /// Decomposes a composed system, freeing its blocks; [`Error::NotFound`] when it is gone.
    async fn decompose(&self, system_id: &str) -> Result<()> {
        let _ = system_id;
        Err(unsupported::<Self>("composition"))
    }

    /// A system's BIOS: its current attributes typed by the registry, the registry, the changes
    /// staged and when the BMC can apply one. Changes nothing.
    async fn read_bios(&self, system_id: &str) -> Result<Bios> {
        let _ = system_id;
        Err(unsupported::<Self>("BIOS settings"))
    }

    /// Stages a change of BIOS attributes (the host has checked it against the registry).
    /// Idempotent: staging the same values again does no harm.
    async fn set_bios(&self, system_id: &str, change: BiosChange) -> Result<()> {
        let _ = (system_id, change);
        Err(unsupported::<Self>("BIOS settings"))
    }

    /// Resets a system's BIOS attributes to their defaults.
    async fn reset_bios(&self, system_id: &str) -> Result<()> {
        let _ = system_id;
        Err(unsupported::<Self>("BIOS settings"))
    }

    /// A system's secure boot. Changes nothing.
    async fn read_secure_boot(&self, system_id: &str) -> Result<SecureBoot> {
        let _ = system_id;
        Err(unsupported::<Self>("secure boot"))
    }

    /// A system's full inventory: processors, memory modules, storage controllers and their
    /// drives, NICs and their link. Changes nothing.
    async fn read_hardware(&self, system_id: &str) -> Result<HardwareInventory> {
        let _ = system_id;
        Err(unsupported::<Self>("the full inventory"))
    }

    /// Turns secure boot on or off from the next boot on. Idempotent.
    async fn set_secure_boot(&self, system_id: &str, enabled: bool) -> Result<()> {
        let _ = (system_id, enabled);
        Err(unsupported::<Self>("secure boot"))
    }

    /// A system's firmware components. Changes nothing.
    async fn read_firmware(&self, system_id: &str) -> Result<Vec<FirmwareComponent>> {
        let _ = system_id;
        Err(unsupported::<Self>("firmware"))
    }

    /// Starts a firmware update; answers the task that runs it (`None`: done already).
    async fn update_firmware(
        &self,
        system_id: &str,
        update: FirmwareUpdate,
    ) -> Result<Option<String>> {
        let _ = (system_id, update);
        Err(unsupported::<Self>("firmware updates"))
    }

    /// Where a task `update_firmware` answered stands. Changes nothing.
    async fn read_task(&self, system_id: &str, task: &str) -> Result<TaskStatus> {
        let _ = (system_id, task);
        Err(unsupported::<Self>("firmware updates"))
    }

    /// A chassis' own power state, by the id [`discover_chassis`](Self::discover_chassis)
    /// reported; [`Error::NotFound`] when it is gone. Changes nothing. New in
    /// `podium:plugin@0.3.0`.
    async fn get_chassis_power(&self, chassis_id: &str) -> Result<PowerState> {
        let _ = chassis_id;
        Err(unsupported::<Self>("chassis power"))
    }

    /// Powers a chassis on or off, or restarts it (what that does to the systems inside is the
    /// chassis' doing; the host asks only while no tenant holds one). Idempotent as
    /// [`set_power`](Self::set_power) is. New in `podium:plugin@0.3.0`.
    async fn set_chassis_power(&self, chassis_id: &str, action: PowerAction) -> Result<()> {
        let _ = (chassis_id, action);
        Err(unsupported::<Self>("chassis power"))
    }
}

pub(crate) fn unsupported<T: Plugin>(what: &str) -> Error {
    Error::Unsupported(format!("{what}: not supported by {}", T::info().name))
}

/// The component's exports for a [`HardwareDriver`] (what [`export!`](crate::export) names).
#[doc(hidden)]
#[derive(Debug)]
pub struct Export<T>(PhantomData<T>);

impl<T: HardwareDriver> plugin::Guest for Export<T> {
    fn info() -> PluginInfo {
        crate::host::bind_exchange();
        T::info()
    }

    fn validate_config(config: String) -> Result<()> {
        crate::host::bind_exchange();
        T::from_config(&config).map(drop)
    }
}

impl<T: HardwareDriver> driver::Guest for Export<T> {
    fn capabilities() -> CapabilitySet {
        crate::host::bind_exchange();
        T::capabilities()
    }

    fn start(call: Call) -> driver::Step {
        crate::host::bind_exchange();
        wit_step(exchange::step(None, Vec::new(), run::<T>(call)))
    }

    fn resume(
        call: Call,
        state: Vec<u8>,
        answers: Vec<std::result::Result<Response, HttpError>>,
    ) -> driver::Step {
        crate::host::bind_exchange();
        wit_step(exchange::step(Some(&state), answers, run::<T>(call)))
    }
}

fn wit_step(step: Step<Result<Outcome>>) -> driver::Step {
    match step {
        Step::Finished(result) => driver::Step::Finished(result),
        Step::Send(requests, state) => driver::Step::Send(driver::Pending {
            requests: requests
                .into_iter()
                .map(
                    |r| crate::wit::hardware_driver::podium::plugin::http::Request {
                        method: r.method,
                        url: r.url,
                        headers: r.headers,
                        body: r.body,
                    },
                )
                .collect(),
            state,
        }),
    }
}

/// One call, from the configuration to its outcome.
pub(crate) async fn run<T: HardwareDriver>(call: Call) -> Result<Outcome> {
    let driver = T::from_config(&crate::host::config())?;
    Ok(match call {
        Call::Probe => Outcome::ServiceInfo(driver.probe().await?),
        Call::Discover => Outcome::Systems(driver.discover().await?),
        Call::Inspect(id) => Outcome::System(driver.inspect(&id).await?),
        Call::GetPower(id) => Outcome::Power(driver.get_power(&id).await?),
        Call::SetPower((id, action)) => {
            driver.set_power(&id, action).await?;
            Outcome::Done
        }
        Call::SetBootOverride((id, settings)) => {
            driver.set_boot_override(&id, settings).await?;
            Outcome::Done
        }
        Call::InsertMedia((id, request)) => {
            driver.insert_media(&id, request).await?;
            Outcome::Done
        }
        Call::EjectMedia((id, media_type)) => {
            driver.eject_media(&id, media_type).await?;
            Outcome::Done
        }
        Call::DiscoverChassis => Outcome::Chassis(driver.discover_chassis().await?),
        Call::ReadComposition => Outcome::Composition(driver.read_composition().await?),
        Call::Compose(request) => Outcome::Composed(driver.compose(request).await?),
        Call::Decompose(id) => {
            driver.decompose(&id).await?;
            Outcome::Done
        }
        Call::ReadBios(id) => Outcome::Bios(driver.read_bios(&id).await?),
        Call::SetBios((id, change)) => {
            driver.set_bios(&id, change).await?;
            Outcome::Done
        }
        Call::ResetBios(id) => {
            driver.reset_bios(&id).await?;
            Outcome::Done
        }
        Call::ReadSecureBoot(id) => Outcome::SecureBoot(driver.read_secure_boot(&id).await?),
        Call::ReadHardware(id) => Outcome::Hardware(driver.read_hardware(&id).await?),
        Call::SetSecureBoot((id, enabled)) => {
            driver.set_secure_boot(&id, enabled).await?;
            Outcome::Done
        }
        Call::ReadFirmware(id) => Outcome::Firmware(driver.read_firmware(&id).await?),
        Call::UpdateFirmware((id, update)) => {
            Outcome::TaskStarted(driver.update_firmware(&id, update).await?)
        }
        Call::ReadTask((id, task)) => Outcome::Task(driver.read_task(&id, &task).await?),
        Call::GetChassisPower(id) => Outcome::Power(driver.get_chassis_power(&id).await?),
        Call::SetChassisPower((id, action)) => {
            driver.set_chassis_power(&id, action).await?;
            Outcome::Done
        }
    })
}
