//! Calls to IPAM plugins: proposing an address from a pool (asking the host's `allocations`
//! import), and the preprovisioning networkData of the address a ramdisk boots with.

use std::net::IpAddr;

use super::super::bindings::wit_allocator;
use super::super::{Plugin, Pre, Runtime};
use super::{CallContext, CallError, Prepared, clip, plugin_err};

/// `call_export!` of this call's plugin, an IPAM strategy.
macro_rules! ipam_export {
    ($call:ident, |$b:ident, $s:ident| $e:expr) => {
        call_export!(
            $call.runtime,
            $call.plugin,
            $call.context,
            Ipam,
            "ipam",
            |$b, $s| $e
        )
    };
}

impl Runtime {
    /// A call to an IPAM strategy, bound to its configuration and the host's view of the pool.
    pub fn ipam<'a>(&'a self, plugin: &'a Plugin, context: CallContext) -> IpamCall<'a> {
        IpamCall {
            runtime: self,
            plugin,
            context,
        }
    }
}

/// One call to an IPAM plugin. Each method consumes it: one call, one instance.
#[derive(Debug)]
pub struct IpamCall<'a> {
    runtime: &'a Runtime,
    plugin: &'a Plugin,
    context: CallContext,
}

/// A pool as an IPAM strategy sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpamPool {
    pub id: String,
    pub name: String,
    /// Inclusive `(start, end)` ranges, in the pool's order.
    pub ranges: Vec<(String, String)>,
    pub prefix: u8,
    pub gateway: Option<String>,
    pub dns_servers: Vec<String>,
}

/// The host an address is for, where the owner is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpamHost {
    pub id: String,
    pub name: String,
    pub boot_mac: Option<String>,
    /// `(name, mac)` of each NIC.
    pub nics: Vec<(Option<String>, String)>,
}

/// What an allocation is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpamRequest {
    pub pool: IpamPool,
    pub owner: String,
    pub host: Option<IpamHost>,
}

impl From<&IpamRequest> for wit_allocator::AllocationRequest {
    fn from(r: &IpamRequest) -> wit_allocator::AllocationRequest {
        wit_allocator::AllocationRequest {
            pool: wit_allocator::Pool {
                id: r.pool.id.clone(),
                name: r.pool.name.clone(),
                ranges: r
                    .pool
                    .ranges
                    .iter()
                    .map(|(start, end)| wit_allocator::IpRange {
                        start: start.clone(),
                        end: end.clone(),
                    })
                    .collect(),
                prefix: r.pool.prefix,
                gateway: r.pool.gateway.clone(),
                dns_servers: r.pool.dns_servers.clone(),
            },
            owner: r.owner.clone(),
            host: r.host.as_ref().map(|h| wit_allocator::HostFacts {
                id: h.id.clone(),
                name: h.name.clone(),
                boot_mac: h.boot_mac.clone(),
                nics: h
                    .nics
                    .iter()
                    .map(|(name, mac)| wit_allocator::Nic {
                        name: name.clone(),
                        mac: mac.clone(),
                    })
                    .collect(),
            }),
        }
    }
}

/// The largest networkData document a strategy may return.
const NETWORK_DATA_MAX: usize = 64 << 10;

impl IpamCall<'_> {
    /// A free address for `request.owner`, or `None` when the pool is exhausted. The answer is
    /// only a proposal: the caller checks it and commits it.
    pub async fn propose(self, request: &IpamRequest) -> Result<Option<IpAddr>, CallError> {
        let request = wit_allocator::AllocationRequest::from(request);
        let (label, result) = ipam_export!(self, |b, s| b
            .podium_plugin_allocator()
            .call_propose(s, &request));
        let Some(text) = result.map_err(plugin_err(label.clone()))? else {
            return Ok(None);
        };
        text.parse::<IpAddr>()
            .map(Some)
            .map_err(|_| CallError::Malformed {
                plugin: label,
                reason: format!(
                    "propose returned `{}`, which is not an IP address",
                    clip(text, 64)
                ),
            })
    }

    /// The preprovisioning networkData for `address`, checked to be a JSON object.
    pub async fn preprovisioning_network_data(
        self,
        request: &IpamRequest,
        address: IpAddr,
    ) -> Result<Option<serde_json::Value>, CallError> {
        let request = wit_allocator::AllocationRequest::from(request);
        let address = address.to_string();
        let (label, result) = ipam_export!(self, |b, s| b
            .podium_plugin_allocator()
            .call_preprovisioning_network_data(s, &request, &address));
        let Some(text) = result.map_err(plugin_err(label.clone()))? else {
            return Ok(None);
        };
        let malformed = |reason: String| CallError::Malformed {
            plugin: label.clone(),
            reason,
        };
        if text.len() > NETWORK_DATA_MAX {
            return Err(malformed(format!(
                "preprovisioning-network-data returned {} bytes (at most {NETWORK_DATA_MAX})",
                text.len()
            )));
        }
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(value) if value.is_object() => Ok(Some(value)),
            Ok(_) => Err(malformed(
                "preprovisioning-network-data returned JSON that is not an object".into(),
            )),
            Err(e) => Err(malformed(format!(
                "preprovisioning-network-data returned invalid JSON: {e}"
            ))),
        }
    }
}
