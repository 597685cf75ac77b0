//! The `ipam` world: an allocation strategy that proposes addresses the host commits, and the
//! networkData a ramdisk boots with where there is no DHCP server.

use std::marker::PhantomData;

use crate::wit::ipam::exports::podium::plugin::{allocator, plugin};
use crate::{Plugin, PluginInfo, Result};

pub use crate::wit::ipam::exports::podium::plugin::allocator::{
    AllocationRequest, HostFacts, IpRange, Nic, Pool,
};

/// The host's view of the pool's allocations (the `allocations` import): the host owns them, a
/// strategy only asks and proposes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Allocations;

impl Allocations {
    /// The lowest free address in `[start, end]`, if any.
    pub fn first_free(&self, start: &str, end: &str) -> Option<String> {
        crate::host::first_free(start, end)
    }

    /// Whether `address` is free (in the pool's ranges and not allocated).
    pub fn is_free(&self, address: &str) -> bool {
        crate::host::is_free(address)
    }
}

/// An allocation strategy. The host commits what `propose` proposes in a transaction and asks
/// again if another writer won, so `propose` may be called many times for one allocation and
/// must change nothing.
pub trait Ipam: Plugin {
    /// A free address of `request.pool` for `request.owner`; `None` when the pool is exhausted.
    fn propose(
        &self,
        request: AllocationRequest,
        allocations: &Allocations,
    ) -> Result<Option<String>>;

    /// The networkData (OpenStack `network_data.json`, JSON text) `request.host` boots its
    /// ramdisk with, given the `address` the host committed; `None` (the default) from a
    /// strategy that writes none.
    fn preprovisioning_network_data(
        &self,
        request: AllocationRequest,
        address: &str,
    ) -> Result<Option<String>> {
        let _ = (request, address);
        Ok(None)
    }
}

/// The component's exports for an [`Ipam`] (what [`export!`](crate::export) names).
#[doc(hidden)]
#[derive(Debug)]
pub struct Export<T>(PhantomData<T>);

impl<T: Ipam> plugin::Guest for Export<T> {
    fn info() -> PluginInfo {
        crate::host::bind_0_1();
        T::info()
    }

    fn validate_config(config: String) -> Result<()> {
        crate::host::bind_0_1();
        T::from_config(&config).map(drop)
    }
}

impl<T: Ipam> allocator::Guest for Export<T> {
    fn propose(request: AllocationRequest) -> Result<Option<String>> {
        crate::with_config(|t: &T| t.propose(request, &Allocations))
    }

    fn preprovisioning_network_data(
        request: AllocationRequest,
        address: String,
    ) -> Result<Option<String>> {
        crate::with_config(|t: &T| t.preprovisioning_network_data(request, &address))
    }
}
