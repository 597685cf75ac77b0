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
    pub created_at: crate::Timestamp,
    pub updated_at: crate::Timestamp,
}

/// Address counts, each a string of decimal digits: an IPv6 pool's reach past 2^53, which a
/// JSON number loses in JavaScript and in most generated clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UsageView {
    /// Addresses the pool can hand out (its ranges minus the gateway and reserved addresses).
    #[serde(with = "decimal")]
    #[schema(value_type = String, pattern = "^[0-9]+$", example = "18446744073709551614")]
    pub total: u128,
    /// Held by an owner.
    #[serde(with = "decimal")]
    #[schema(value_type = String, pattern = "^[0-9]+$", example = "2")]
    pub allocated: u128,
    /// Pre-allocated to an owner that has not claimed it yet.
    #[serde(with = "decimal")]
    #[schema(value_type = String, pattern = "^[0-9]+$", example = "0")]
    pub pre_allocated: u128,
    /// Neither held nor pre-allocated.
    #[serde(with = "decimal")]
    #[schema(value_type = String, pattern = "^[0-9]+$", example = "18446744073709551612")]
    pub free: u128,
}

/// A count as a string of decimal digits.
mod decimal {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub(super) fn serialize<S: Serializer>(n: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(n)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(D::Error::custom(format!("`{text}` is not a count")));
        }
        text.parse().map_err(D::Error::custom)
    }
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
    pub created_at: crate::Timestamp,
}
