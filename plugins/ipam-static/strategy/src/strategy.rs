//! The allocation strategies in plain Rust. The host's `allocations` import sits behind the
//! [`Allocations`] trait and randomness behind [`RandomSource`], so native unit tests drive the
//! same code the component runs.

use std::fmt;
use std::net::IpAddr;

use crate::config::Strategy;
use crate::range::AddrRange;

/// The host's view of the pool's allocations (the WIT `allocations` interface).
pub trait Allocations {
    /// The lowest free address in `[start, end]`, if any.
    fn first_free(&mut self, start: &str, end: &str) -> Option<String>;

    /// Whether `address` is free.
    fn is_free(&mut self, address: &str) -> bool;
}

/// A source of random 64-bit words.
pub trait RandomSource {
    fn next_u64(&mut self) -> u64;

    fn next_u128(&mut self) -> u128 {
        (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64())
    }
}

/// SplitMix64: a tiny, fast generator. Seeded from the OS per proposal; picking an address needs
/// spread, not secrecy.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// Seeded from the operating system (on wasm32-wasip2, the `wasi:random` import).
    pub fn from_os() -> Result<Self, ProposeError> {
        getrandom::u64()
            .map(Self::new)
            .map_err(|e| ProposeError::Internal(format!("no randomness available: {e}")))
    }
}

impl RandomSource for SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Why a proposal failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProposeError {
    /// The request is invalid; the message names the problem.
    InvalidInput(String),
    /// The host or the environment misbehaved.
    Internal(String),
}

impl fmt::Display for ProposeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidInput(m) => write!(f, "invalid input: {m}"),
            Self::Internal(m) => write!(f, "internal: {m}"),
        }
    }
}

impl std::error::Error for ProposeError {}

/// How many random picks are checked with `is-free` before falling back to `first-free`.
pub const RANDOM_ATTEMPTS: usize = 4;

/// Proposes an address with `strategy`, seeding randomness from the OS only when it is needed.
pub fn propose(
    strategy: Strategy,
    ranges: &[AddrRange],
    allocations: &mut impl Allocations,
) -> Result<Option<IpAddr>, ProposeError> {
    match strategy {
        Strategy::Sequential => sequential(ranges, allocations),
        Strategy::Random => random(ranges, allocations, &mut SplitMix64::from_os()?),
    }
}

/// The lowest free address of the first range that has one; `None` when every range is full.
pub fn sequential(
    ranges: &[AddrRange],
    allocations: &mut impl Allocations,
) -> Result<Option<IpAddr>, ProposeError> {
    for range in ranges {
        if let Some(addr) = first_free(allocations, range, range.start())? {
            return Ok(Some(addr));
        }
    }
    Ok(None)
}

/// A uniformly random address over all ranges (each range weighted by its size), checked with
/// `is-free`. After [`RANDOM_ATTEMPTS`] misses: the first free address from the last pick to the
/// end of its range, then from the start of that range, then the other ranges in turn.
pub fn random(
    ranges: &[AddrRange],
    allocations: &mut impl Allocations,
    rng: &mut impl RandomSource,
) -> Result<Option<IpAddr>, ProposeError> {
    if ranges.is_empty() {
        return Ok(None);
    }
    // Saturates only for pools of 2^128 addresses or more, where a slight skew does not matter.
    let total = ranges
        .iter()
        .fold(0u128, |sum, r| sum.saturating_add(r.size_saturating()));
    let mut attempt = 1;
    let (index, addr) = loop {
        let (index, addr) = pick(ranges, total, rng);
        if allocations.is_free(&addr.to_string()) {
            return Ok(Some(addr));
        }
        if attempt == RANDOM_ATTEMPTS {
            break (index, addr);
        }
        attempt += 1;
    };
    let range = &ranges[index];
    if let Some(found) = first_free(allocations, range, addr)? {
        return Ok(Some(found));
    }
    if let Some(found) = first_free(allocations, range, range.start())? {
        return Ok(Some(found));
    }
    for other in (1..ranges.len()).map(|k| (index + k) % ranges.len()) {
        let range = &ranges[other];
        if let Some(found) = first_free(allocations, range, range.start())? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// A uniformly random address over the union of `ranges`, with the index of its range.
fn pick(ranges: &[AddrRange], total: u128, rng: &mut impl RandomSource) -> (usize, IpAddr) {
    let mut offset = uniform_below(rng, total);
    for (i, range) in ranges.iter().enumerate() {
        let size = range.size_saturating();
        if offset < size {
            return (i, range.addr_at(offset));
        }
        offset -= size;
    }
    // Reached only when `total` saturated; `addr_at` clamps to the end of the range.
    let last = ranges.len() - 1;
    (last, ranges[last].addr_at(offset))
}

/// A uniform value in `[0, n)` (`n = 0` is taken as 1), without modulo bias: draws below
/// `2^128 mod n` are rejected so that the accepted ones cover each residue equally often.
pub fn uniform_below(rng: &mut impl RandomSource, n: u128) -> u128 {
    let n = n.max(1);
    let threshold = n.wrapping_neg() % n;
    loop {
        let x = rng.next_u128();
        if x >= threshold {
            return x % n;
        }
    }
}

/// Asks the host for the first free address in `[from, range.end]` and checks its answer.
fn first_free(
    allocations: &mut impl Allocations,
    range: &AddrRange,
    from: IpAddr,
) -> Result<Option<IpAddr>, ProposeError> {
    let Some(answer) = allocations.first_free(&from.to_string(), &range.end().to_string()) else {
        return Ok(None);
    };
    let addr = answer.parse::<IpAddr>().map_err(|_| {
        ProposeError::Internal(format!(
            "allocations.first-free returned {answer:?}, which is not an IP address"
        ))
    })?;
    if !range.contains(addr) {
        return Err(ProposeError::Internal(format!(
            "allocations.first-free returned {addr}, outside [{from}, {}]",
            range.end()
        )));
    }
    Ok(Some(addr))
}
