//! The component: `ipam-static` as a [`podium_plugin::Ipam`], the range arithmetic handed to
//! `ipam-strategy`.

use ipam_strategy::strategy::{self, ProposeError};
use ipam_strategy::{Config, parse_ranges};
use podium_plugin::ipam::{AllocationRequest, Allocations};
use podium_plugin::{Error, Ipam, Plugin, PluginInfo, Result};

/// The plugin, built from its configuration for each call.
#[derive(Debug)]
pub struct IpamStatic(Config);

impl Plugin for IpamStatic {
    fn info() -> PluginInfo {
        podium_plugin::info!(
            "ipam-static",
            "Allocates from a pool's ranges (IPv4 and IPv6), sequentially or at random; config \
             {\"strategy\": \"sequential\" | \"random\"}"
        )
    }

    fn from_config(config: &str) -> Result<Self> {
        Config::parse(config)
            .map(IpamStatic)
            .map_err(Error::InvalidConfig)
    }
}

impl Ipam for IpamStatic {
    fn propose(
        &self,
        request: AllocationRequest,
        allocations: &Allocations,
    ) -> Result<Option<String>> {
        propose(self.0.strategy, &request, allocations)
    }
}

/// A proposal from the request's ranges.
fn propose(
    strategy: ipam_strategy::Strategy,
    request: &AllocationRequest,
    allocations: &Allocations,
) -> Result<Option<String>> {
    let ranges = parse_ranges(
        request
            .pool
            .ranges
            .iter()
            .map(|r| (r.start.as_str(), r.end.as_str())),
    )
    .map_err(Error::InvalidInput)?;
    strategy::propose(strategy, &ranges, &mut HostAllocations(allocations))
        .map(|addr| addr.map(|a| a.to_string()))
        .map_err(|e| match e {
            ProposeError::InvalidInput(m) => Error::InvalidInput(m),
            ProposeError::Internal(m) => Error::Internal(m),
        })
}

/// The host's `allocations` import as `ipam-strategy` asks it.
struct HostAllocations<'a>(&'a Allocations);

impl strategy::Allocations for HostAllocations<'_> {
    fn first_free(&mut self, start: &str, end: &str) -> Option<String> {
        self.0.first_free(start, end)
    }

    fn is_free(&mut self, address: &str) -> bool {
        self.0.is_free(address)
    }
}

podium_plugin::export!(IpamStatic: Ipam);
