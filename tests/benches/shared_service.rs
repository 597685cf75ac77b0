//! One shared Redfish service in front of many machines (Valence's pod manager): the per-site
//! limit (`--operations-per-pod-manager`, 8) must hold however many hosts are powered on at once,
//! so Podium never floods the service. A latency proxy (`FaultProxy`) in front of one
//! sushy-tools process answers every request after a delay; the hosts are discovered and
//! registered with no delay, then all powered on at once with it. Reports the wall time beside
//! what the limit allows (the hosts in rounds of the limit, each round its requests one after
//! another) and beside the physical limit with no protection (every host at once), and the most
//! requests the service held at once.
//!
//! `cargo bench -p podium-tests --bench shared_service [-- HOSTS DELAY_MS]`; defaults 1000, 500.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{FaultProxy, ProcessServer};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");
/// The server's default per-site limit.
const PER_SITE: u64 = 8;

/// The ids of the hosts `query` selects (`&state=available`).
async fn hosts_where(admin: &podium_tests::Client, query: &str) -> Vec<String> {
    admin
        .hosts_all(query)
        .await
        .iter()
        .map(|h| h.id.to_string())
        .collect()
}

fn main() {
    let [hosts, delay_ms] = podium_tests::bench_args([1000, 500]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let service = Sushy::start(SushyConfig::with_systems(hosts as u32))
            .await
            .expect("an emulator");
        let proxy = FaultProxy::start(&service.url()).await;
        let data = tempfile::tempdir().unwrap();
        let server = ProcessServer::start(BIN, data.path(), None).await;
        let admin = server.admin();
        admin.create_site(&proxy.url()).await;
        let registered = Instant::now();
        let ids = loop {
            let ids = hosts_where(&admin, "&state=available").await;
            if ids.len() >= hosts {
                break ids;
            }
            assert!(
                registered.elapsed() < Duration::from_secs(1800),
                "{} of {hosts} hosts registered after 30 minutes",
                ids.len()
            );
            tokio::time::sleep(Duration::from_secs(1)).await;
        };
        let registered = registered.elapsed();

        // Every host powered on at once, each request to the service answered after the delay.
        proxy.delay_ms.store(delay_ms as u64, Ordering::Release);
        proxy.most_at_once.store(0, Ordering::Release);
        let before = proxy.requests.load(Ordering::Acquire);
        let (_, cpu_before) = server.usage().unwrap();
        let started = Instant::now();
        for id in &ids {
            let op = admin
                .post(&format!("/v1/hosts/{id}/power"), json!({"action": "on"}))
                .await;
            assert!(op.status.is_success(), "{}", op.text);
        }
        while hosts_where(&admin, "&power_state=on").await.len() < hosts {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let powered = started.elapsed();
        let (_, cpu_after) = server.usage().unwrap();
        let requests = proxy.requests.load(Ordering::Acquire) - before;
        let per_host = requests as f64 / hosts as f64;
        let delay = Duration::from_millis(delay_ms as u64);
        let rounds = (hosts as u64).div_ceil(PER_SITE);
        let protected = delay.mul_f64(per_host * rounds as f64);
        let unprotected = delay.mul_f64(per_host.ceil());
        println!(
            "{hosts} hosts behind one shared Redfish service (sushy-tools behind a proxy adding \
             {delay_ms} ms per request, after they were registered without it in {:.0} s), \
             SQLite, the default limit of {PER_SITE} operations at once per pod manager",
            registered.as_secs_f64()
        );
        println!();
        println!(
            "| work | wall time | with the limit, at best | with no limit, at best | most requests at the service at once | Podium CPU |"
        );
        println!("|---|---|---|---|---|---|");
        println!(
            "| power on {hosts} hosts ({requests} requests) | {:.1} s | {:.1} s | {:.1} s | {} | {:.1} s |",
            powered.as_secs_f64(),
            protected.as_secs_f64(),
            unprotected.as_secs_f64(),
            proxy.most_at_once.load(Ordering::Acquire),
            (cpu_after - cpu_before).as_secs_f64(),
        );
        server.kill9().await;
    });
}
