//! Podium's server: the HTTP API, the tenancy model and the application layer over the
//! datastore (`podium-store`) and the plugin runtime (`podium-runtime`). The `podium` binary
//! (`host/`) runs it with the bundled plugins. `ARCHITECTURE.md` at the repository root is the map.

pub mod api;
pub mod app;
pub mod auth;
mod background;
mod bindings;
pub mod claims;
pub mod config_drive;
mod endpoint;
pub mod error;
pub mod grants;
pub mod hosts;
mod inventory;
pub mod ipam;
mod labels;
pub mod lifecycle;
pub mod operations;
pub mod params;
pub mod plugins;
pub mod pod_managers;
pub mod rendering;
pub mod sealing;
pub mod server;
pub mod tenants;
