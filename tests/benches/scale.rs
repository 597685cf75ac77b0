//! Scale: pod managers of emulated systems (sushy-tools, one emulator process per pod manager,
//! all in memory). Measures the time from registering the pod managers until every system is a
//! host that registered and was inspected (`available`), then the time to power on a share of
//! them; beside each, the CPU time Podium used and the emulators used, and Podium's peak resident
//! memory, so the figures show who the wall time was spent waiting on.
//!
//! `cargo bench -p podium-tests --bench scale [-- POD_MANAGERS SYSTEMS POWER_ON]`; defaults 10,
//! 1000, 1000 (100 per pod manager).

use std::time::{Duration, Instant};

use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{Client, ProcessServer, process_usage};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");

/// Every item of a paged list.
async fn all(admin: &Client, path: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = admin.get(&format!("{path}&limit=1000{cursor}")).await;
        assert!(page.status.is_success(), "{}", page.text);
        out.extend(page.body["items"].as_array().unwrap().iter().cloned());
        match page.body["next"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return out,
        }
    }
}

/// CPU time used so far by the emulators.
fn emulators_cpu(emulators: &[Sushy]) -> Duration {
    emulators
        .iter()
        .filter_map(|e| process_usage(e.pid()?))
        .map(|(_, cpu)| cpu)
        .sum()
}

/// Polls until `done` (checked every 500 ms), tracking the server's peak resident memory.
async fn wait_for(
    server: &ProcessServer,
    peak: &mut u64,
    what: &str,
    mut done: impl AsyncFnMut() -> bool,
) {
    let give_up = Instant::now() + Duration::from_secs(3600);
    loop {
        if let Some((rss, _)) = server.usage() {
            *peak = (*peak).max(rss);
        }
        if done().await {
            return;
        }
        assert!(Instant::now() < give_up, "{what}: not within an hour");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn main() {
    let [pods, systems, power_on] = podium_tests::bench_args([10, 1000, 1000]);
    let power_on = power_on.min(pods * systems);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut emulators = Vec::new();
        for _ in 0..pods {
            emulators.push(
                Sushy::start(SushyConfig::with_systems(systems as u32))
                    .await
                    .expect("an emulator"),
            );
        }
        let data = tempfile::tempdir().unwrap();
        let server = ProcessServer::start(BIN, data.path(), None).await;
        let admin = server.admin();
        let mut peak = 0;
        let (_, podium_before) = server.usage().unwrap();
        let emulators_before = emulators_cpu(&emulators);

        // Register every pod manager: each is probed, synced, and its hosts registered and
        // inspected.
        let started = Instant::now();
        let mut pms = Vec::new();
        for (i, e) in emulators.iter().enumerate() {
            let pm = admin
                .post(
                    "/v1/pod_managers",
                    json!({"name": format!("site-{i}"), "url": e.url()}),
                )
                .await;
            assert!(pm.status.is_success(), "{}", pm.text);
            pms.push(pm.body["uuid"].as_str().unwrap().to_owned());
        }
        let total = pods * systems;
        wait_for(&server, &mut peak, "every host available", async || {
            all(&admin, "/v1/hosts?state=available")
                .await
                .iter()
                .filter(|h| h["kind"] == "system")
                .count()
                == total
        })
        .await;
        let synced = started.elapsed();
        let (_, podium_sync) = server.usage().unwrap();
        let emulators_sync = emulators_cpu(&emulators);

        // Power on `power_on` hosts, spread over the pod managers.
        let hosts = all(&admin, "/v1/hosts?state=available").await;
        let chosen: Vec<&Value> = pms
            .iter()
            .flat_map(|pm| {
                hosts
                    .iter()
                    .filter(move |h| h["pod_manager"] == pm.as_str())
                    .take(power_on / pods)
            })
            .collect();
        let started = Instant::now();
        for h in &chosen {
            let op = admin
                .post(
                    &format!("/v1/hosts/{}/power", h["id"].as_str().unwrap()),
                    json!({"action": "on"}),
                )
                .await;
            assert!(op.status.is_success(), "{}", op.text);
        }
        wait_for(&server, &mut peak, "the hosts powered on", async || {
            all(&admin, "/v1/hosts?power_state=on").await.len() >= chosen.len()
        })
        .await;
        let powered = started.elapsed();
        let (_, podium_power) = server.usage().unwrap();
        let emulators_power = emulators_cpu(&emulators);

        let row = |what: &str, wall: Duration, podium: Duration, emu: Duration| {
            println!(
                "| {what} | {:.1} s | {:.1} s ({:.0} %) | {:.1} s ({:.0} %) |",
                wall.as_secs_f64(),
                podium.as_secs_f64(),
                100.0 * podium.as_secs_f64() / wall.as_secs_f64(),
                emu.as_secs_f64(),
                100.0 * emu.as_secs_f64() / wall.as_secs_f64(),
            )
        };
        println!(
            "{pods} pod managers x {systems} systems (sushy-tools, one process each), SQLite; \
             Podium's peak resident memory {:.0} MiB",
            peak as f64 / 1024.0
        );
        println!();
        println!("| work | wall time | Podium CPU (of wall) | emulators CPU (of wall) |");
        println!("|---|---|---|---|");
        row(
            &format!(
                "register and sync {pods} pod managers: {total} hosts registered and inspected"
            ),
            synced,
            podium_sync - podium_before,
            emulators_sync - emulators_before,
        );
        row(
            &format!("power on {} hosts", chosen.len()),
            powered,
            podium_power - podium_sync,
            emulators_power - emulators_sync,
        );
        server.kill9().await;
    });
}
