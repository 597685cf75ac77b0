//! Unmodified Ironic through Podium's Redfish service against the same Ironic straight at the
//! BMC: `manage` and `power on` of NODES nodes (sushy-tools' fake driver, one emulator), first
//! with each node's `redfish_address` the emulator itself (the admin's BMC credentials), then
//! with it Podium (`/redfish/v1/Systems/{host}` of a tenant's claims, the tenant's token as the
//! password). The wall time of each step, and what Podium adds.
//!
//! `cargo bench -p podium-tests --bench ironic_redfish [-- NODES]`; default 20. Needs Ironic
//! (`scripts/setup-peers.sh --ironic`; `scripts/bench.sh ironic_redfish` installs it).

use std::time::{Duration, Instant};

use podium_tests::ironic::Ironic;
use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{ProcessServer, eventually};
use reqwest::Method;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");
const BMC_PASSWORD: &str = "bench-bmc-password";

/// Asks Ironic for `change` on every node, then waits until every node shows `field = want`;
/// the wall time from the first request.
async fn step(
    ironic: &Ironic,
    nodes: &[String],
    change: (&str, &str),
    field: &str,
    want: &str,
) -> Duration {
    let start = Instant::now();
    for node in nodes {
        let (kind, target) = change;
        ironic
            .request(
                Method::PUT,
                &format!("/nodes/{node}/states/{kind}"),
                Some(json!({ "target": target })),
            )
            .await
            .unwrap();
    }
    loop {
        let all = ironic.nodes().await.unwrap();
        let ours: Vec<_> = all
            .iter()
            .filter(|n| nodes.iter().any(|id| n["uuid"] == id.as_str()))
            .collect();
        if let Some(failed) = ours.iter().find(|n| !n["last_error"].is_null()) {
            panic!("a node failed: {failed}\n{}", ironic.log());
        }
        if ours.iter().all(|n| n[field] == want) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "{field} never {want}: {ours:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn main() {
    let [count] = podium_tests::bench_args([20]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut config = SushyConfig::with_systems(count as u32);
        config.basic_auth = Some(("admin".into(), BMC_PASSWORD.into()));
        let bmc = Sushy::start(config).await.unwrap();
        let data = tempfile::tempdir().unwrap();
        let server = ProcessServer::start(BIN, data.path(), None).await;
        let admin = server.admin();
        let pm = admin
            .created(
                "/v1/pod_managers",
                json!({"name": "site", "url": bmc.url(), "auth": {"username": "admin", "password": BMC_PASSWORD}}),
            )
            .await;
        let pm = pm.body["uuid"].as_str().unwrap().to_owned();
        eventually(Duration::from_secs(120), "hosts available", || async {
            let hosts = admin.hosts_all(&format!("&pod_manager={pm}&state=available")).await;
            (hosts.iter().filter(|h| h.kind == podium_types::HostKind::System).count() == count).then_some(())
        })
        .await;
        let (_, token) = admin.granted_tenant("tenant", &pm).await;
        let tenant = server.client(Some(&token));
        let mut hosts = Vec::new();
        for _ in 0..count {
            let claim = tenant
                .created(
                    "/v1/claims",
                    json!({"pod_manager": pm, "image": {"url": "http://127.0.0.1:9/os.iso"}, "online": false}),
                )
                .await;
            hosts.push((
                claim.body["host"]["id"].as_str().unwrap().to_owned(),
                claim.body["host"]["uuid"].as_str().unwrap().to_owned(),
            ));
        }
        let ironic = Ironic::start(Duration::from_secs(3600)).await.unwrap();

        // Straight at the BMC.
        let mut direct = Vec::new();
        for (_, uuid) in &hosts {
            direct.push(
                ironic
                    .node_create_with(&bmc.url(), &format!("/redfish/v1/Systems/{uuid}"), "admin", BMC_PASSWORD)
                    .await
                    .unwrap(),
            );
        }
        let direct_manage = step(&ironic, &direct, ("provision", "manage"), "provision_state", "manageable").await;
        let direct_on = step(&ironic, &direct, ("power", "power on"), "power_state", "power on").await;
        for node in &direct {
            ironic.request(Method::DELETE, &format!("/nodes/{node}"), None).await.ok();
        }
        // The machines off again, at the BMC.
        for (_, uuid) in &hosts {
            bmc.request(Method::POST, &format!("/redfish/v1/Systems/{uuid}/Actions/ComputerSystem.Reset"))
                .json(&json!({"ResetType": "ForceOff"}))
                .send()
                .await
                .unwrap();
        }
        // Podium sees them off (its refresh, or a sync) before Ironic is pointed at it.
        admin.post(&format!("/v1/pod_managers/{pm}/sync"), json!({})).await;
        eventually(Duration::from_secs(60), "Podium sees the machines off", || async {
            let hosts = admin.hosts_all(&format!("&pod_manager={pm}&power_state=off")).await;
            (hosts.iter().filter(|h| h.kind == podium_types::HostKind::System).count() == count).then_some(())
        })
        .await;

        // Through Podium, as the tenant.
        let mut through = Vec::new();
        for (host, _) in &hosts {
            through.push(
                ironic
                    .node_create_with(&server.url, &format!("/redfish/v1/Systems/{host}"), "tenant", &token)
                    .await
                    .unwrap(),
            );
        }
        let podium_manage = step(&ironic, &through, ("provision", "manage"), "provision_state", "manageable").await;
        let podium_on = step(&ironic, &through, ("power", "power on"), "power_state", "power on").await;

        println!("Ironic 39.0.0, {count} nodes (sushy-tools' fake driver, one emulator)");
        println!();
        println!("| step | Ironic straight at the BMC | Ironic through Podium | Podium adds |");
        println!("|---|---|---|---|");
        for (name, d, p) in [("manage", direct_manage, podium_manage), ("power on", direct_on, podium_on)] {
            println!(
                "| {name} | {:.1} s | {:.1} s | {:+.0} % |",
                d.as_secs_f64(),
                p.as_secs_f64(),
                (p.as_secs_f64() / d.as_secs_f64() - 1.0) * 100.0
            );
        }
        server.kill9().await;
    });
}
