//! Address pools and the addresses claimed from them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::requests::IpRangeParams;
use crate::{IpClaimId, IpPoolId, PluginBinding, PodManagerId, TenantId};

/// An address pool with its usage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct IpPoolView {
    pub id: IpPoolId,
    pub name: String,
    /// `4` or `6`.
    pub family: i64,
    /// The subnet every range lies in, from the first range and `prefix`.
    pub subnet: String,
    pub prefix: i64,
    pub gateway: Option<String>,
    pub dns_servers: Vec<String>,
    pub ranges: Vec<IpRangeParams>,
    pub reserved: Vec<String>,
    pub pre_allocations: BTreeMap<String, String>,
    pub plugin: PluginBinding,
    pub pod_manager: Option<PodManagerId>,
    pub tenants: Vec<TenantId>,
    pub usage: UsageView,
    pub created_at: String,
    pub updated_at: String,
}

/// Address counts. Numbers, possibly beyond 2^53 for IPv6 pools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UsageView {
    /// Addresses the pool can hand out (its ranges minus the gateway and reserved addresses).
    #[schema(value_type = u64)]
    pub total: u128,
    /// Held by an owner.
    #[schema(value_type = u64)]
    pub allocated: u128,
    /// Pre-allocated to an owner that has not claimed it yet.
    #[schema(value_type = u64)]
    pub pre_allocated: u128,
    #[schema(value_type = u64)]
    pub free: u128,
}

/// An address held by an owner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct IpClaimView {
    pub id: IpClaimId,
    pub pool: IpPoolId,
    pub owner: String,
    pub address: String,
    pub prefix: u8,
    pub gateway: Option<String>,
    pub dns_servers: Vec<String>,
    /// The preprovisioning networkData (OpenStack `network_data.json`) for a host owner, from a
    /// plugin that writes one (`ipam-dhcpless`). Shown on create and on view, not in lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub network_data: Option<serde_json::Value>,
    pub created_at: String,
}
