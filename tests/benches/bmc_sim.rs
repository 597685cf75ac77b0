//! What the Redfish BMC simulator (`podium_tests::bmc_sim`, in its own `bmc-sim` process) costs
//! a request: `CONNECTIONS` keep-alive clients each read systems of the BMC in turn, without
//! latency, over HTTP and then HTTPS; the process's CPU time over the requests it answered.
//! The figure that lets a benchmark of thousands of BMCs say the simulator's CPU was not what
//! it measured.
//!
//! `cargo bench -p podium-tests --bench bmc_sim [-- REQUESTS CONNECTIONS]`; defaults 20000, 16.

use std::time::{Duration, Instant};

use futures::StreamExt;
use podium_tests::bmc_sim::{BmcFleet, SimConfig, SimTls};

const BMC_SIM: &str = env!("CARGO_BIN_EXE_bmc-sim");

fn cpu(fleet: &BmcFleet) -> Duration {
    fleet
        .pids()
        .into_iter()
        .filter_map(podium_tests::process_usage)
        .map(|(_, cpu)| cpu)
        .sum()
}

async fn run(requests: usize, connections: usize, tls: Option<SimTls>) {
    let scheme = if tls.is_some() { "HTTPS" } else { "HTTP" };
    let mut client = reqwest::Client::builder().pool_max_idle_per_host(connections);
    if let Some(tls) = &tls {
        client = client.add_root_certificate(
            reqwest::Certificate::from_pem(tls.cert_pem.as_bytes()).expect("the certificate"),
        );
    }
    let client = client.build().expect("a client");
    let fleet = BmcFleet::start(
        BMC_SIM,
        SimConfig {
            basic_auth: Some(("admin".into(), "password".into())),
            tls,
            ..SimConfig::with_systems(8)
        },
    )
    .await;
    let url = fleet.url(0);
    let system = |i: usize| {
        let system = podium_tests::sushy::FakeSystem::numbered((i % 8) as u32 + 1);
        format!("{url}/redfish/v1/Systems/{}", system.uuid)
    };
    // Every connection opened (and its handshake done) before the count starts.
    let warm: Vec<_> = futures::stream::iter(0..connections * 4)
        .map(|i| {
            client
                .get(system(i))
                .basic_auth("admin", Some("password"))
                .send()
        })
        .buffer_unordered(connections)
        .collect()
        .await;
    for answer in warm {
        assert!(answer.expect("an answer").status().is_success());
    }
    let before = cpu(&fleet);
    let counted_before: u64 = fleet.requests().await.iter().sum();
    let started = Instant::now();
    let answered: Vec<_> = futures::stream::iter(0..requests)
        .map(|i| {
            let request = client.get(system(i)).basic_auth("admin", Some("password"));
            async move {
                let response = request.send().await.expect("an answer");
                assert!(response.status().is_success(), "{}", response.status());
                response.bytes().await.expect("a body").len()
            }
        })
        .buffer_unordered(connections)
        .collect()
        .await;
    let wall = started.elapsed();
    let used = cpu(&fleet) - before;
    let counted: u64 = fleet.requests().await.iter().sum::<u64>() - counted_before;
    assert_eq!(counted as usize, requests, "the simulator's own count");
    let bytes: usize = answered.iter().sum();
    println!(
        "{scheme}: {requests} requests (a system, {} bytes each) on {connections} keep-alive \
         connections in {:.2} s: the simulator's CPU {:.2} s, {:.1} µs per request",
        bytes / requests,
        wall.as_secs_f64(),
        used.as_secs_f64(),
        used.as_secs_f64() * 1e6 / requests as f64,
    );
}

fn main() {
    let [requests, connections] = podium_tests::bench_args([20_000, 16]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        run(requests, connections, None).await;
        run(requests, connections, Some(SimTls::generate())).await;
    });
}
