//! The WIT glue: generates the `ipam` world's bindings, checks the request's host and boot NIC,
//! and hands the range arithmetic to `ipam-strategy` (shared with `plugin-ipam-static`).

wit_bindgen::generate!({
    path: "../../wit/podium-plugin@0.1.0",
    world: "ipam",
});

use exports::podium::plugin::allocator::{AllocationRequest, Guest as AllocatorGuest};
use exports::podium::plugin::plugin::Guest as PluginGuest;
use ipam_strategy::strategy::{self, Allocations, ProposeError};
use podium::plugin::types::{Error, PluginInfo};

use crate::{BootNetwork, Config, check_boot_nic, preprovisioning_network_data};

/// The exported component; only `export_glue` names it, hence unused in native builds.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Component;

/// The host's `allocations` import.
struct HostAllocations;

impl Allocations for HostAllocations {
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
            name: "ipam-dhcpless".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            description: "DHCP-less preprovisioning: one address per host, for its boot NIC; \
                          config {\"release\": \"on-available\" | \"keep\", \
                          \"strategy\": \"sequential\" | \"random\"}"
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
    /// Address stability is the host's job: an owner that already holds an address (a host
    /// inspected again) gets that one back without asking; this is only called for owners that
    /// hold none.
    fn propose(request: AllocationRequest) -> Result<Option<String>, Error> {
        let config = Config::parse(&podium::plugin::config::get()).map_err(Error::InvalidConfig)?;
        Self::boot_mac(&request)?;
        let ranges = ipam_strategy::parse_ranges(
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

    fn preprovisioning_network_data(
        request: AllocationRequest,
        address: String,
    ) -> Result<Option<String>, Error> {
        let mac = Self::boot_mac(&request)?;
        let pool = &request.pool;
        preprovisioning_network_data(&BootNetwork {
            mac: &mac,
            address: &address,
            prefix: pool.prefix,
            gateway: pool.gateway.as_deref(),
            dns_servers: &pool.dns_servers,
        })
        .map(Some)
        .map_err(Error::InvalidInput)
    }
}

impl Component {
    /// The boot MAC as the host's inventory spells it (validated by `check_boot_nic`).
    fn boot_mac(request: &AllocationRequest) -> Result<String, Error> {
        let Some(host) = &request.host else {
            return Err(Error::InvalidInput(format!(
                "request.host is none: ipam-dhcpless writes networkData only for a host (owner {:?})",
                request.owner
            )));
        };
        check_boot_nic(
            &host.name,
            host.boot_mac.as_deref(),
            host.nics.iter().map(|n| n.mac.as_str()),
        )
        .map_err(Error::InvalidInput)?;
        Ok(host.boot_mac.clone().unwrap_or_default())
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
