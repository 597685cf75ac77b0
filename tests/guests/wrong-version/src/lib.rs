//! `wrong-version`: a hardware driver built against `podium:plugin@0.9.0` (a copy of the WIT in
//! `wit/` with only the version changed), for the host's test that a plugin of another contract
//! version is refused.
//!
//! Every function is a minimal stub: the host is expected to refuse the component before calling
//! any of them.

wit_bindgen::generate!({
    path: "wit",
    world: "hardware-driver",
});

use exports::podium::plugin::driver::{
    BootSettings, CapabilitySet, Guest as DriverGuest, MediaRequest, MediaType, PowerAction,
    PowerState, ServiceInfo, System,
};
use exports::podium::plugin::plugin::Guest as PluginGuest;
use podium::plugin::types::{Error, PluginInfo};

/// The exported component; only `export_glue` names it, hence unused in native builds.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Component;

fn unsupported<T>() -> Result<T, Error> {
    Err(Error::Unsupported("wrong-version: test guest".into()))
}

impl PluginGuest for Component {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "wrong-version".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Test guest the host must refuse".into(),
        }
    }

    fn validate_config(_config: String) -> Result<(), Error> {
        Ok(())
    }
}

impl DriverGuest for Component {
    fn capabilities() -> CapabilitySet {
        CapabilitySet::empty()
    }

    fn probe() -> Result<ServiceInfo, Error> {
        unsupported()
    }

    fn discover() -> Result<Vec<System>, Error> {
        Ok(Vec::new())
    }

    fn get_power(_system_id: String) -> Result<PowerState, Error> {
        unsupported()
    }

    fn set_power(_system_id: String, _action: PowerAction) -> Result<(), Error> {
        unsupported()
    }

    fn set_boot_override(_system_id: String, _settings: BootSettings) -> Result<(), Error> {
        unsupported()
    }

    fn insert_media(_system_id: String, _request: MediaRequest) -> Result<(), Error> {
        unsupported()
    }

    fn eject_media(_system_id: String, _media_type: MediaType) -> Result<(), Error> {
        unsupported()
    }
}

/// `export!` expands to the exports' C-ABI shims (`export_name`, raw pointers), which are `unsafe`;
/// the workspace denies `unsafe_code`, so the lint is allowed for that expansion alone. Native
/// builds (unit tests, clippy) leave it out: export names like `podium:plugin/...#info` are not
/// valid symbols for a native linker.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod export_glue {
    use super::Component;
    super::export!(Component with_types_in super);
}
