//! A pool as the application reads it (its stored definition decoded and checked), its usage,
//! an address claimed from it, and who may own one.

use crate::data::{IpAllocationRow, IpPoolRow};
use crate::error::Error;
use podium_runtime::{IpamHost, IpamPool, IpamRequest};
use podium_types::views::{AddressView, IpClaimView, IpPoolView, UsageView};

use super::space::{Space, SpaceParams};

/// A stored pool with its address space checked.
#[derive(Clone, Debug)]
pub(crate) struct IpPool {
    pub(crate) row: IpPoolRow,
    pub(crate) space: Space,
}

/// How many addresses a pool has and how many are in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Usage {
    pub(crate) total: u128,
    pub(crate) allocated: u128,
    /// Pre-allocated to an owner that has not claimed it yet.
    pub(crate) pre_allocated: u128,
    pub(crate) free: u128,
}

impl IpPool {
    pub(super) fn from_row(row: IpPoolRow) -> Result<IpPool, Error> {
        let space = Space::new(SpaceParams {
            ranges: &row.ranges,
            prefix: u8::try_from(row.prefix).unwrap_or(u8::MAX),
            gateway: row.gateway.as_deref(),
            reserved: &row.reserved,
            pre_allocations: &row.pre_allocations,
        })
        .map_err(|e| Error::Internal(anyhow::anyhow!("stored pool {} is invalid: {e}", row.id)))?;
        Ok(IpPool { row, space })
    }

    /// Usage from the number of allocations; pre-allocations count as used until claimed.
    pub(crate) fn usage(&self, allocated: u128, claimed_pre_allocations: u128) -> Usage {
        let total = self.space.total();
        let pre_allocated =
            (self.space.pre_allocations.len() as u128).saturating_sub(claimed_pre_allocations);
        Usage {
            total,
            allocated,
            pre_allocated,
            free: total.saturating_sub(allocated + pre_allocated),
        }
    }

    pub(super) fn request(&self, owner: &str, host: Option<IpamHost>) -> IpamRequest {
        IpamRequest {
            pool: IpamPool {
                id: self.row.id.to_string(),
                name: self.row.name.clone(),
                ranges: self.space.ranges_text(),
                prefix: u8::try_from(self.row.prefix).unwrap_or(u8::MAX),
                gateway: self.row.gateway.clone(),
                dns_servers: self.row.dns_servers.clone(),
            },
            owner: owner.to_owned(),
            host,
        }
    }
}

/// An address held by an owner, as the API shows it.
#[derive(Clone, Debug)]
pub(crate) struct IpClaim {
    pub(crate) row: IpAllocationRow,
    pub(crate) prefix: u8,
    pub(crate) gateway: Option<String>,
    pub(crate) dns_servers: Vec<String>,
    /// The preprovisioning networkData, from a plugin that writes one (ipam-dhcpless).
    pub(crate) network_data: Option<serde_json::Value>,
}

impl IpPool {
    pub(super) fn claim(
        &self,
        row: IpAllocationRow,
        network_data: Option<serde_json::Value>,
    ) -> IpClaim {
        IpClaim {
            row,
            prefix: u8::try_from(self.row.prefix).unwrap_or(u8::MAX),
            gateway: self.row.gateway.clone(),
            dns_servers: self.row.dns_servers.clone(),
            network_data,
        }
    }

    /// The release setting of an `ipam-dhcpless` pool: `keep` holds a host's preprovisioning
    /// address for as long as the host exists.
    pub(crate) fn keeps_host_addresses(&self) -> bool {
        self.row
            .plugin
            .config
            .get("release")
            .and_then(|v| v.as_str())
            == Some("keep")
    }
}

impl IpPool {
    /// The pool as the API shows it, with its usage.
    pub(crate) fn view(self, u: Usage) -> IpPoolView {
        let p = self;
        IpPoolView {
            id: p.row.id,
            name: p.row.name,
            family: p.row.family,
            subnet: p.row.subnet,
            prefix: p.row.prefix,
            gateway: p.row.gateway,
            dns_servers: p.row.dns_servers,
            ranges: p.row.ranges,
            reserved: p.row.reserved,
            pre_allocations: p.row.pre_allocations,
            plugin: p.row.plugin,
            pod_manager: p.row.pod_manager,
            tenants: p.row.tenants,
            usage: UsageView {
                total: u.total,
                allocated: u.allocated,
                pre_allocated: u.pre_allocated,
                free: u.free,
            },
            created_at: p.row.created_at,
            updated_at: p.row.updated_at,
        }
    }
}

impl IpClaim {
    pub(crate) fn view(self) -> IpClaimView {
        let c = self;
        IpClaimView {
            id: c.row.id,
            pool: c.row.pool_id,
            owner: c.row.owner,
            address: c.row.address,
            prefix: c.prefix,
            gateway: c.gateway,
            dns_servers: c.dns_servers,
            network_data: c.network_data,
            created_at: c.row.created_at,
        }
    }

    /// The address as a claim's tenant sees it among its host's.
    pub(crate) fn address(self) -> AddressView {
        AddressView {
            address: self.row.address,
            prefix: self.prefix,
            gateway: self.gateway,
            dns_servers: self.dns_servers,
        }
    }
}
