//! Podium's integration tests: one binary, one file per area. Every test starts its own Podium
//! on a free loopback port over a fresh database, and talks to real peers.

mod agent;
mod audit;
mod backup;
mod bios;
mod chassis;
mod claims;
mod cli;
mod composed;
mod composition;
mod config;
mod contract;
mod contract_0_1_0;
mod deploy;
mod events;
mod exchange;
mod faults;
mod hosts;
mod ipam;
mod lifecycle;
mod metrics;
mod operations;
mod packaging;
mod plugin_kit;
mod plugins;
mod pod_managers;
mod provisioning;
mod redfish;
mod redfish_service;
mod rendering;
mod secrets;
mod server;
mod tasks;
mod tenants;
mod tidy;
mod tls;
