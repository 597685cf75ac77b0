//! A pool as the application reads it (its stored definition decoded and checked), its usage,
//! an address claimed from it, and who may own one.

use std::collections::BTreeMap;

use podium_types::TenantId;

use crate::bindings::PluginBinding;
use crate::error::Error;
use podium_runtime::{IpamHost, IpamPool, IpamRequest};
use podium_store::{IpAllocationRow, IpPoolRow};
use podium_types::requests::IpRangeParams;

use super::space::{Space, SpaceParams};

/// A stored pool with its definition decoded and checked.
#[derive(Clone, Debug)]
pub struct IpPool {
    pub row: IpPoolRow,
    pub space: Space,
    pub ranges: Vec<IpRangeParams>,
    pub dns_servers: Vec<String>,
    pub reserved: Vec<String>,
    pub pre_allocations: BTreeMap<String, String>,
    pub plugin: PluginBinding,
    pub tenants: Vec<TenantId>,
}

/// How many addresses a pool has and how many are in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    pub total: u128,
    pub allocated: u128,
    /// Pre-allocated to an owner that has not claimed it yet.
    pub pre_allocated: u128,
    pub free: u128,
}

impl IpPool {
    pub(super) fn from_row(row: IpPoolRow) -> Result<IpPool, Error> {
        fn decode<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, Error> {
            serde_json::from_str(text)
                .map_err(|e| Error::Internal(anyhow::anyhow!("stored pool {what}: {e}")))
        }
        let ranges: Vec<IpRangeParams> = decode("ranges", &row.ranges)?;
        let reserved: Vec<String> = decode("reserved", &row.reserved)?;
        let pre_allocations: BTreeMap<String, String> =
            decode("pre_allocations", &row.pre_allocations)?;
        let space = Space::new(SpaceParams {
            ranges: &ranges,
            prefix: u8::try_from(row.prefix).unwrap_or(u8::MAX),
            gateway: row.gateway.as_deref(),
            reserved: &reserved,
            pre_allocations: &pre_allocations,
        })
        .map_err(|e| Error::Internal(anyhow::anyhow!("stored pool {} is invalid: {e}", row.id)))?;
        Ok(IpPool {
            dns_servers: decode("dns_servers", &row.dns_servers)?,
            plugin: decode("plugin", &row.plugin)?,
            tenants: decode("tenants", &row.tenants)?,
            space,
            ranges,
            reserved,
            pre_allocations,
            row,
        })
    }

    /// Usage from the number of allocations; pre-allocations count as used until claimed.
    pub fn usage(&self, allocated: u128, claimed_pre_allocations: u128) -> Usage {
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
                dns_servers: self.dns_servers.clone(),
            },
            owner: owner.to_owned(),
            host,
        }
    }
}

/// An address held by an owner, as the API shows it.
#[derive(Clone, Debug)]
pub struct IpClaim {
    pub row: IpAllocationRow,
    pub prefix: u8,
    pub gateway: Option<String>,
    pub dns_servers: Vec<String>,
    /// The preprovisioning networkData, from a plugin that writes one (ipam-dhcpless).
    pub network_data: Option<serde_json::Value>,
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
            dns_servers: self.dns_servers.clone(),
            network_data,
        }
    }

    /// The release setting of an `ipam-dhcpless` pool: `keep` holds a host's preprovisioning
    /// address for as long as the host exists.
    pub fn keeps_host_addresses(&self) -> bool {
        self.plugin.config.get("release").and_then(|v| v.as_str()) == Some("keep")
    }
}
