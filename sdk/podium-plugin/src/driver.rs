//! The `hardware-driver` world: power, boot and inventory of machines through their BMC.

use std::marker::PhantomData;

use crate::wit::hardware_driver::exports::podium::plugin::{driver, plugin};
use crate::{Error, Plugin, PluginInfo, Result};

pub use crate::wit::hardware_driver::exports::podium::plugin::driver::{
    BootMode, BootPersistence, BootSettings, BootTarget, CapabilitySet, MediaRequest, MediaSlot,
    MediaType, Nic, PowerAction, PowerState, ServiceInfo, System, SystemKind,
};

/// A hardware driver. Every call builds the plugin from the pod manager's configuration
/// ([`Plugin::from_config`]) and then calls one method; nothing is kept between calls.
///
/// Idempotency the host expects: `probe`, `discover`, `inspect` and `get_power` change nothing;
/// `set_power`, `set_boot_override`, `insert_media` and `eject_media` may be called again after a
/// failure or a crash and must then do no harm (powering on a machine that is on succeeds,
/// inserting the image already inserted succeeds).
///
/// The methods with a default answer `unsupported`: leave them out of [`capabilities`] too.
///
/// [`capabilities`]: HardwareDriver::capabilities
pub trait HardwareDriver: Plugin {
    /// What this driver can do.
    fn capabilities() -> CapabilitySet;

    /// Checks that the endpoint answers and accepts the credentials.
    fn probe(&self) -> Result<ServiceInfo>;

    /// Every system (and chassis, where reported) behind the endpoint, with its inventory.
    fn discover(&self) -> Result<Vec<System>>;

    /// The inventory of one system `discover` reported; `not-found` when it is gone.
    fn inspect(&self, system_id: &str) -> Result<System>;

    fn get_power(&self, system_id: &str) -> Result<PowerState>;

    fn set_power(&self, system_id: &str, action: PowerAction) -> Result<()> {
        let _ = (system_id, action);
        Err(unsupported::<Self>("power control"))
    }

    fn set_boot_override(&self, system_id: &str, settings: BootSettings) -> Result<()> {
        let _ = (system_id, settings);
        Err(unsupported::<Self>("boot override"))
    }

    /// Inserts an image into a free slot that takes `request.media_type`.
    fn insert_media(&self, system_id: &str, request: MediaRequest) -> Result<()> {
        let _ = (system_id, request);
        Err(unsupported::<Self>("virtual media"))
    }

    /// Ejects whatever is inserted in the slots that take `media_type`.
    fn eject_media(&self, system_id: &str, media_type: MediaType) -> Result<()> {
        let _ = (system_id, media_type);
        Err(unsupported::<Self>("virtual media"))
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
        T::info()
    }

    fn validate_config(config: String) -> Result<()> {
        T::from_config(&config).map(drop)
    }
}

impl<T: HardwareDriver> driver::Guest for Export<T> {
    fn capabilities() -> CapabilitySet {
        T::capabilities()
    }

    fn probe() -> Result<ServiceInfo> {
        crate::with_config(T::probe)
    }

    fn discover() -> Result<Vec<System>> {
        crate::with_config(T::discover)
    }

    fn inspect(system_id: String) -> Result<System> {
        crate::with_config(|t: &T| t.inspect(&system_id))
    }

    fn get_power(system_id: String) -> Result<PowerState> {
        crate::with_config(|t: &T| t.get_power(&system_id))
    }

    fn set_power(system_id: String, action: PowerAction) -> Result<()> {
        crate::with_config(|t: &T| t.set_power(&system_id, action))
    }

    fn set_boot_override(system_id: String, settings: BootSettings) -> Result<()> {
        crate::with_config(|t: &T| t.set_boot_override(&system_id, settings))
    }

    fn insert_media(system_id: String, request: MediaRequest) -> Result<()> {
        crate::with_config(|t: &T| t.insert_media(&system_id, request))
    }

    fn eject_media(system_id: String, media_type: MediaType) -> Result<()> {
        crate::with_config(|t: &T| t.eject_media(&system_id, media_type))
    }
}
