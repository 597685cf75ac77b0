//! Compose to available: how long from an admin's `POST /v1/pod_managers/{uuid}/composed_nodes`
//! until the node is a host `available` to claims (the composition read, the blocks picked and
//! composed, the system inspected and recorded, then the host's `register` and `inspect`
//! operations), and how long a decomposition takes. Against `podium_tests::composition`'s
//! service on DMTF's `public-composability` (its one compute block freed first).
//!
//! `cargo bench -p podium-tests --bench compose [-- RUNS]`; default 10.

use std::time::{Duration, Instant};

use podium_tests::composition::{Composition, composable};
use podium_tests::{TestServer, bench_args, eventually, site};
use podium_types::views::{ComposedNodeView, HostView, List};
use reqwest::StatusCode;
use serde_json::json;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[tokio::main]
async fn main() {
    let [runs] = bench_args([10]);
    let folder = composable();
    let service = Composition::start(folder.path())
        .await
        .expect("the service starts");
    let server = TestServer::start_with(site::quick).await;
    let admin = server.admin();
    let pm = admin.synced_site(service.url()).await;
    let nodes: List<ComposedNodeView> = admin
        .get(&format!("/v1/pod_managers/{pm}/composed_nodes"))
        .await
        .view();
    let first = nodes
        .items
        .iter()
        .find(|n| n.system_id == "/redfish/v1/Systems/ComposedSystem")
        .expect("the mockup's composed system");
    let freed = admin
        .delete(&format!("/v1/composed_nodes/{}", first.id))
        .await;
    assert_eq!(freed.status, StatusCode::NO_CONTENT, "{}", freed.text);

    let url = format!("/v1/pod_managers/{pm}/composed_nodes");
    let mut requests = Vec::new();
    let mut to_available = Vec::new();
    let mut decompositions = Vec::new();
    for run in 0..runs {
        let started = Instant::now();
        let node = admin
            .created(
                &url,
                json!({"name": format!("node-{run}"), "requirement": {"drives": 1}}),
            )
            .await
            .view::<ComposedNodeView>();
        requests.push(started.elapsed());
        eventually(Duration::from_secs(120), "the node available", || {
            let admin = &admin;
            let id = node.id.clone();
            async move {
                let host: HostView = admin.get(&format!("/v1/hosts/{id}")).await.view();
                (host.state.as_str() == "available").then_some(())
            }
        })
        .await;
        to_available.push(started.elapsed());
        let started = Instant::now();
        let gone = admin
            .delete(&format!("/v1/composed_nodes/{}", node.id))
            .await;
        assert_eq!(gone.status, StatusCode::NO_CONTENT, "{}", gone.text);
        decompositions.push(started.elapsed());
    }
    let report = json!({
        "runs": runs,
        "compose_request_ms": median(requests).as_secs_f64() * 1000.0,
        "compose_to_available_ms": median(to_available).as_secs_f64() * 1000.0,
        "decompose_ms": median(decompositions).as_secs_f64() * 1000.0,
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
