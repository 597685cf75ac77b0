//! The allocation logic of Podium's IPAM plugins in plain Rust, shared by `plugin-ipam-static` and
//! `plugin-ipam-dhcpless`: range arithmetic over IPv4 and IPv6 ([`range`]), the sequential and
//! random strategies behind an [`Allocations`] trait standing for the host import ([`strategy`]),
//! the `strategy` configuration field ([`config`]), and a proposal for the SDK's request
//! ([`request`]).
//!
//! It is a crate of its own, not part of `plugin-ipam-static`, because a component crate cannot
//! be a library of another component: its rlib carries the `ipam` world's export symbols and
//! `component-type` section, which collide with the dependent plugin's own when linked into one
//! `.wasm`. A cargo feature cannot switch them off either, since features are unified when both
//! plugins are built in one `cargo build`. The tests live in `plugin-ipam-static/tests`.

pub mod config;
pub mod range;
pub mod request;
pub mod strategy;

pub use config::{Config, Strategy};
pub use range::{AddrRange, Family, parse_ranges};
pub use request::propose_for;
pub use strategy::{Allocations, ProposeError, RandomSource, SplitMix64, propose};
