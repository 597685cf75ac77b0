//! Native tests of the driver: the Redfish logic against a fake service built from payloads
//! captured from sushy-tools' emulator. The end-to-end tests against a live emulator are in tests/all/redfish.rs.

mod bios;
mod config;
mod discover;
mod errors;
mod fake;
mod firmware;
mod operations;
