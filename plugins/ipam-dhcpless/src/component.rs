//! The component: `ipam-dhcpless` as a [`podium_plugin::Ipam`]. Checks the request's host and
//! boot NIC and hands the range arithmetic to `ipam-strategy` (shared with `plugin-ipam-static`).

use podium_plugin::ipam::{AllocationRequest, Allocations};
use podium_plugin::{Error, Ipam, Plugin, PluginInfo, Result};

use crate::{BootNetwork, Config, check_boot_nic, preprovisioning_network_data};

/// The plugin, built from its configuration for each call.
#[derive(Debug)]
pub struct IpamDhcpless(Config);

impl Plugin for IpamDhcpless {
    fn info() -> PluginInfo {
        podium_plugin::info!(
            "ipam-dhcpless",
            "DHCP-less preprovisioning: one address per host, for its boot NIC; config \
             {\"release\": \"on-available\" | \"keep\", \"strategy\": \"sequential\" | \"random\"}"
        )
    }

    fn from_config(config: &str) -> Result<Self> {
        Config::parse(config)
            .map(IpamDhcpless)
            .map_err(Error::InvalidConfig)
    }
}

impl Ipam for IpamDhcpless {
    /// Address stability is the host's job: an owner that already holds an address (a host
    /// inspected again) gets that one back without asking; this is only called for owners that
    /// hold none.
    fn propose(
        &self,
        request: AllocationRequest,
        allocations: &Allocations,
    ) -> Result<Option<String>> {
        boot_mac(&request)?;
        ipam_strategy::propose_for(self.0.strategy, &request, allocations)
    }

    fn preprovisioning_network_data(
        &self,
        request: AllocationRequest,
        address: &str,
    ) -> Result<Option<String>> {
        let mac = boot_mac(&request)?;
        let pool = &request.pool;
        preprovisioning_network_data(&BootNetwork {
            mac: &mac,
            address,
            prefix: pool.prefix,
            gateway: pool.gateway.as_deref(),
            dns_servers: &pool.dns_servers,
        })
        .map(Some)
        .map_err(Error::InvalidInput)
    }
}

/// The boot MAC as the host's inventory spells it (validated by `check_boot_nic`).
fn boot_mac(request: &AllocationRequest) -> Result<String> {
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

podium_plugin::export!(IpamDhcpless: Ipam);
