//! A proposal for an SDK `AllocationRequest`, asking the host's `allocations` import: what both
//! IPAM plugins' `propose` does once its own checks pass.

use podium_plugin::ipam::{AllocationRequest, Allocations};
use podium_plugin::{Error, Result};

use crate::{ProposeError, Strategy, parse_ranges};

/// A free address of `request.pool`'s ranges by `strategy`; `None` when the pool is exhausted.
pub fn propose_for(
    strategy: Strategy,
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
    crate::propose(strategy, &ranges, &mut HostAllocations(allocations))
        .map(|addr| addr.map(|a| a.to_string()))
        .map_err(|e| match e {
            ProposeError::InvalidInput(m) => Error::InvalidInput(m),
            ProposeError::Internal(m) => Error::Internal(m),
        })
}

/// The host's `allocations` import as the strategies ask it.
struct HostAllocations<'a>(&'a Allocations);

impl crate::Allocations for HostAllocations<'_> {
    fn first_free(&mut self, start: &str, end: &str) -> Option<String> {
        self.0.first_free(start, end)
    }

    fn is_free(&mut self, address: &str) -> bool {
        self.0.is_free(address)
    }
}
