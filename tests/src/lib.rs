//! Support code for Podium's integration tests (`tests/all/`), a file per subject: the server
//! (`server.rs`: a real Podium per test on a free loopback port, over a fresh SQLite file or a
//! fresh PostgreSQL database, `postgres.rs`), the client of its API (`client.rs`), the site most
//! tests start from with its tenants (`site.rs`), processes of their own (`process.rs`), the
//! image server (`images.rs`), the faulty proxy (`fault_proxy.rs`) and the composition service
//! (`composition.rs`), the real peers (`sushy`,
//! `ironic`, `cloud_init`, `vfat`, `vm`, `api_tools`), the test guests' component bytes and the
//! digest that pins a released contract's WIT (`released.rs`).
//!
//! `PODIUM_TEST_DATABASE=postgres` runs every test on PostgreSQL
//! (`PODIUM_TEST_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432/postgres`); each test
//! gets its own database, dropped afterwards.

pub mod api_tools;
pub mod bladed;
pub mod bmc_sim;
mod client;
pub mod cloud_init;
pub mod composition;
mod fault_proxy;
mod images;
pub mod ironic;
mod postgres;
mod process;
mod receiver;
pub mod redfish_face;
pub mod released;
mod server;
pub mod site;
pub mod sushy;
pub mod vfat;
pub mod vm;

pub use client::{Body, Client, EventStream, Reply, SentEvent};
pub use fault_proxy::FaultProxy;
pub use images::ImageServer;
pub use postgres::PostgresDatabase;
pub use process::{ConnectionCounter, ProcessServer, process_peak_rss, process_usage};
pub use receiver::{EventReceiver, Received};
pub use server::TestServer;
pub use site::{BMC_PASSWORD, Site, Tenant};

use std::time::Duration;

/// The bytes of a test guest built by `tests/build.rs`.
pub mod guests {
    pub static FAULTY: &[u8] = include_bytes!(env!("GUEST_FAULTY"));
    /// A `podium:plugin@0.2.0` driver that misbehaves in the steps of its calls.
    pub static FAULTY_EXCHANGE: &[u8] = include_bytes!(env!("GUEST_FAULTY_EXCHANGE"));
    pub static WRONG_VERSION: &[u8] = include_bytes!(env!("GUEST_WRONG_VERSION"));
    pub static MISSING_EXPORT: &[u8] = include_bytes!(env!("GUEST_MISSING_EXPORT"));
    pub static OTHER_WORLD: &[u8] = include_bytes!(env!("GUEST_OTHER_WORLD"));
    /// A driver built against the released `podium:plugin@0.1.0` (its own copy of the WIT).
    pub static CONTRACT_0_1_0: &[u8] = include_bytes!(env!("GUEST_CONTRACT_0_1_0"));
    /// A sans-IO driver built against the released `podium:plugin@0.2.0` (its own copy of the
    /// WIT), answering every call.
    pub static CONTRACT_0_2_0: &[u8] = include_bytes!(env!("GUEST_CONTRACT_0_2_0"));
}

/// The admin token every test server starts with.
pub const ADMIN_TOKEN: &str = "pdm_test-admin-token-0123456789abcdef";

/// Polls `check` every 100 ms until it returns `Some`, for at most `timeout`; panics with
/// `what` if it never does.
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if tokio::time::Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A benchmark's numeric arguments (`cargo bench --bench NAME -- 10000 5`), each defaulting to
/// the matching entry of `defaults`; other arguments (cargo's `--bench`) are skipped.
pub fn bench_args<const N: usize>(defaults: [usize; N]) -> [usize; N] {
    let given: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    std::array::from_fn(|i| given.get(i).copied().unwrap_or(defaults[i]))
}
