//! Podium's host: the HTTP API, the tenancy model, the state, and the runtime that runs the
//! WebAssembly plugins. `ARCHITECTURE.md` at the repository root is the map.

pub mod api;
pub mod app;
pub mod auth;
pub mod bundled;
pub mod claims;
pub mod cli;
pub mod config_drive;
pub mod error;
pub mod grants;
pub mod hosts;
pub mod ipam;
pub mod lifecycle;
pub mod operations;
pub mod params;
pub mod plugins;
pub mod pod_managers;
pub mod provisioning;
pub mod rendering;
pub mod sealing;
pub mod server;
pub mod tenants;
