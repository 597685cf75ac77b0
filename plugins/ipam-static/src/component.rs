//! The component: `ipam-static` as a [`podium_plugin::Ipam`], the proposal handed to
//! `ipam-strategy`.

use ipam_strategy::{Config, propose_for};
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
        propose_for(self.0.strategy, &request, allocations)
    }
}

podium_plugin::export!(IpamStatic: Ipam);
