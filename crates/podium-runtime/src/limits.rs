//! The per-call resource limiter: memory, tables and instances, with a record of which limit a
//! plugin hit so its failure can be reported as "memory limit" rather than a bare trap.

use wasmtime::ResourceLimiter;

#[derive(Debug)]
pub(super) struct Limiter {
    memory_limit: usize,
    memory_in_use: usize,
    pub(super) memory_exceeded: bool,
}

/// The error a growth past the limit traps with.
#[derive(Debug, thiserror::Error)]
#[error("memory limit of {limit} bytes exceeded (asked for {desired} bytes)")]
pub(super) struct MemoryLimitExceeded {
    pub(super) limit: usize,
    pub(super) desired: usize,
}

impl Limiter {
    pub(super) fn new(memory_limit: usize) -> Limiter {
        Limiter {
            memory_limit,
            memory_in_use: 0,
            memory_exceeded: false,
        }
    }
}

const MAX_TABLE_ELEMENTS: usize = 100_000;

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // All memories of the component count against one budget.
        let total = self.memory_in_use - current.min(self.memory_in_use) + desired;
        if total > self.memory_limit {
            self.memory_exceeded = true;
            return Err(MemoryLimitExceeded {
                limit: self.memory_limit,
                desired: total,
            }
            .into());
        }
        self.memory_in_use = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    fn instances(&self) -> usize {
        16
    }

    fn tables(&self) -> usize {
        16
    }

    fn memories(&self) -> usize {
        4
    }
}
