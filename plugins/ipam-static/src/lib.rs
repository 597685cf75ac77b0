//! `ipam-static`: Podium's default IPAM strategy, a WASM component (world `ipam`) that picks an
//! address from a pool's ranges, IPv4 or IPv6, sequentially or at random.
//!
//! The host owns all allocation state and commits proposals; this plugin only asks it questions
//! (`allocations.first-free`, `allocations.is-free`) and proposes one address. The logic is the
//! `ipam-strategy` crate (in `strategy/`, shared with `plugin-ipam-dhcpless`), re-exported here
//! and tested natively in `tests/`; `src/component.rs` is only the WIT glue.
//!
//! Configuration: `{"strategy": "sequential" | "random"}`, default sequential.

pub use ipam_strategy::{
    AddrRange, Allocations, Config, Family, ProposeError, RandomSource, SplitMix64, Strategy,
    config, parse_ranges, propose, range, strategy,
};

mod component;
pub use component::IpamStatic;
