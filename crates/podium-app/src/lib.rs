//! Podium's application: `Podium` and the feature modules (pod managers, hosts, tenants and
//! grants, claims, IPAM, rendering, operations, background work) over the datastore
//! (`podium-store`) and the plugin runtime (`podium-runtime`). Every operation is a method on
//! `Podium` that takes the caller first, and policy is decided here. The HTTP API
//! (`podium-server`) calls these. `ARCHITECTURE.md` at the repository root is the map.

pub mod agent;
pub mod app;
pub mod audit;
pub mod auth;
pub mod background;
pub mod backup;
mod bindings;
mod bios;
mod chassis;
mod claims;
mod composition;
mod config_drive;
mod data;
mod drivers;
mod endpoint;
pub mod error;
pub mod events;
mod firmware;
mod grants;
pub mod hardware;
mod hosts;
mod ipam;
mod labels;
mod lifecycle;
mod metrics;
pub mod operations;
pub mod plugins;
mod pod_managers;
mod queue;
pub mod redfish;
pub mod rendering;
mod sealing;
pub mod subscriptions;
mod tasks;
mod tenants;
mod urls;
mod views;

/// The latency buckets of every histogram Podium keeps (plugin calls, operations, HTTP
/// requests), so that they read alike.
pub use podium_runtime::latency_histogram;
