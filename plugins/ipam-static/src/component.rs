//! The WIT glue: generates the `ipam` world's bindings, adapts the host's `allocations` import to
//! [`ipam_strategy::Allocations`] and maps errors onto the WIT `error` variant.

wit_bindgen::generate!({
    path: "../../wit/podium-plugin@0.1.0",
    world: "ipam",
});

use exports::podium::plugin::allocator::{AllocationRequest, Guest as AllocatorGuest};
use exports::podium::plugin::plugin::Guest as PluginGuest;
use podium::plugin::types::{Error, PluginInfo};

use ipam_strategy::strategy::{self, ProposeError};
use ipam_strategy::{Config, parse_ranges};

/// The exported component; only `export_glue` names it, hence unused in native builds.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Component;

/// The host's `allocations` import.
struct HostAllocations;

impl strategy::Allocations for HostAllocations {
    fn first_free(&mut self, start: &str, end: &str) -> Option<String> {
        podium::plugin::allocations::first_free(start, end)
    }

    fn is_free(&mut self, address: &str) -> bool {
        podium::plugin::allocations::is_free(address)
    }
}

impl PluginGuest for Component {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "ipam-static".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "Allocates from a pool's ranges (IPv4 and IPv6), sequentially or at \
                          random; config {\"strategy\": \"sequential\" | \"random\"}"
                .into(),
        }
    }

    fn validate_config(config: String) -> Result<(), Error> {
        Config::parse(&config)
            .map(drop)
            .map_err(Error::InvalidConfig)
    }
}

impl AllocatorGuest for Component {
    fn propose(request: AllocationRequest) -> Result<Option<String>, Error> {
        let config = Config::parse(&podium::plugin::config::get()).map_err(Error::InvalidConfig)?;
        let ranges = parse_ranges(
            request
                .pool
                .ranges
                .iter()
                .map(|r| (r.start.as_str(), r.end.as_str())),
        )
        .map_err(Error::InvalidInput)?;
        strategy::propose(config.strategy, &ranges, &mut HostAllocations)
            .map(|addr| addr.map(|a| a.to_string()))
            .map_err(|e| match e {
                ProposeError::InvalidInput(m) => Error::InvalidInput(m),
                ProposeError::Internal(m) => Error::Internal(m),
            })
    }

    /// A static pool leaves boot-time network configuration to the renderer.
    fn preprovisioning_network_data(
        _request: AllocationRequest,
        _address: String,
    ) -> Result<Option<String>, Error> {
        Ok(None)
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
