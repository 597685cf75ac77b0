//! The component tree at scale: a Redfish service of 1,000 blades (10 racks of 10 enclosures of
//! 10 blades, DMTF's `public-bladed` resources rewritten by `podium_tests::bladed`, 1,110 chassis
//! and 1,000 systems) served by sushy-tools' `sushy-static`, and Podium syncing it.
//!
//! Measured: the Redfish driver's `discover-chassis` alone (the `Chassis` collection and every
//! member, through the plugin runtime); a pod manager's first sync, from its registration until
//! its 1,000 hosts are placed in the tree (systems discovered and stored, the tree read and
//! stored, each host placed); a sync that changes nothing; and listing a rack's 100 hosts
//! (`GET /v1/hosts?chassis=RACK`, a recursive query down the tree).
//!
//! `sushy-static` is one thread behind a listen backlog of 5 (Python's `HTTPServer`): more
//! connections at once than it accepts have their SYN dropped, and TCP sends it again after a
//! second. Driven at Podium's defaults (16 requests a call, 8 operations at once), every fan-out
//! past the backlog waited that second, and the figures measured the peer's backlog, not Podium.
//! So the driver is given PARALLEL requests at once (the pod manager's `limits.requests`), and
//! the pod manager runs one operation at a time (`limits.service`), as an admin would set them
//! for a BMC this small.
//!
//! `cargo bench -p podium-tests --bench chassis [-- RACKS ENCLOSURES BLADES RUNS PARALLEL]`;
//! defaults 10 10 10 3 4.

use std::time::{Duration, Instant};

use podium_runtime::{CallContext, Endpoint, TlsPolicy};
use podium_tests::bladed::{self, Shape};
use podium_tests::sushy::SushyStatic;
use podium_tests::{TestServer, bench_args, eventually, site};
use podium_types::views::{ChassisView, List};
use serde_json::json;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[tokio::main]
async fn main() {
    let [racks, enclosures, blades, runs, parallel] = bench_args([10, 10, 10, 3, 4]);
    let shape = Shape {
        racks,
        enclosures_per_rack: enclosures,
        blades_per_enclosure: blades,
    };
    let systems = racks * enclosures * blades;
    let chassis = racks + racks * enclosures + systems;
    let folder = tempfile::tempdir().unwrap();
    let written = Instant::now();
    bladed::write(folder.path(), shape);
    eprintln!(
        "wrote {chassis} chassis and {systems} systems in {:.1} s",
        written.elapsed().as_secs_f64()
    );
    let bmc = SushyStatic::start(folder.path())
        .await
        .expect("sushy-static starts");
    let server = TestServer::start_with(site::quick).await;

    // The driver alone.
    let plugin = server.bundled_driver("redfish").await;
    let runtime = server.podium.runtime();
    let mut driver_times = Vec::new();
    for _ in 0..runs {
        let context = CallContext {
            config: "{}".into(),
            endpoint: Some(Endpoint {
                base: bmc.url().parse().unwrap(),
                credentials: None,
                pod_manager: None,
                parallel_requests: Some(parallel),
                tls: TlsPolicy::System,
            }),
            allocations: None,
        };
        let started = Instant::now();
        let tree = runtime
            .driver(&plugin, context)
            .discover_chassis()
            .await
            .expect("the tree");
        driver_times.push(started.elapsed());
        assert_eq!(tree.len(), chassis);
    }

    // The first sync, from registration until every host stands in the tree.
    let admin = server.admin();
    let started = Instant::now();
    let pm = admin
        .created(
            "/v1/pod_managers",
            json!({"name": "site", "url": bmc.url(),
                   "limits": {"requests": parallel, "service": 1}}),
        )
        .await
        .body["uuid"]
        .as_str()
        .expect("the pod manager's uuid")
        .to_owned();
    let rack = eventually(
        Duration::from_secs(3600),
        "every host placed in the tree",
        || async {
            let hosts = admin.hosts_all(&format!("&pod_manager={pm}")).await;
            let placed = hosts.iter().filter(|h| h.chassis.len() == 3).count();
            (placed == systems).then(|| hosts[0].chassis[0].id.clone())
        },
    )
    .await;
    let first = started.elapsed();
    let listed: List<ChassisView> = admin
        .get(&format!("/v1/pod_managers/{pm}/chassis?limit=1000"))
        .await
        .view();
    assert!(!listed.items.is_empty());

    // Syncs that change nothing.
    let mut sync_times = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        admin.sync_all(std::slice::from_ref(&pm)).await;
        sync_times.push(started.elapsed());
    }

    // A rack's hosts.
    let mut list_times = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let hosts = admin.hosts_all(&format!("&chassis={rack}")).await;
        list_times.push(started.elapsed());
        assert_eq!(hosts.len(), systems / racks);
    }

    let report = json!({
        "chassis": chassis,
        "systems": systems,
        "parallel_requests": parallel,
        "driver_discover_chassis_s": median(driver_times).as_secs_f64(),
        "first_sync_to_placed_s": first.as_secs_f64(),
        "resync_s": median(sync_times).as_secs_f64(),
        "rack_hosts_list_ms": median(list_times).as_secs_f64() * 1000.0,
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
