//! The HTTP API under load, and Podium's memory: requests per second and p50 / p99 latency of
//! `GET /v1/hosts/{id}`, of the same host through the Redfish service
//! (`GET /redfish/v1/Systems/{id}`) and of a paged `GET /v1/hosts?limit=100&cursor=...` with 10,000 hosts
//! (behind 100 pod managers) on SQLite, driven by `wrk` (one thread, keep-alive connections);
//! beside them two baselines, `GET /livez` (no authentication, no database: the HTTP stack alone)
//! and `GET /healthz` (one round trip to the database, `SELECT 1`); and the resident
//! memory of `podium serve` idle and with those hosts.
//!
//! The server is the real binary in its own process; `wrk` runs on the same 2-core machine, so
//! client and server share the CPUs. Hosts are written straight into the database (100 pod managers are made through the
//! API first), not discovered: the sync is measured by the scale benchmark.
//!
//! `cargo bench -p podium-tests --bench api [-- HOSTS SECONDS CLIENTS]`; defaults 10000, 10, 32.

use std::time::Duration;

use podium_tests::{ADMIN_TOKEN, ProcessServer};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");
const POD_MANAGERS: usize = 100;

/// What a load run measured.
struct Load {
    requests: usize,
    errors: usize,
    per_second: f64,
    p50: Duration,
    p99: Duration,
}

/// `wrk` (one thread, `clients` keep-alive connections) for `seconds` against `base`: `paths`
/// are taken in turn, a different one for each request, or the one path when there is one.
fn load(base: &str, clients: usize, seconds: u64, paths: &[String]) -> Load {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("paths.lua");
    let list: Vec<String> = paths.iter().map(|p| format!("{p:?}")).collect();
    std::fs::write(
        &script,
        format!(
            "local paths = {{{}}}\nlocal i = 0\n\
             request = function()\n  i = i % #paths + 1\n  \
             return wrk.format(\"GET\", paths[i])\nend\n",
            list.join(", ")
        ),
    )
    .unwrap();
    let out = std::process::Command::new("wrk")
        .args([
            "-t1",
            &format!("-c{clients}"),
            &format!("-d{seconds}s"),
            "--latency",
        ])
        .args(["-H", &format!("Authorization: Bearer {ADMIN_TOKEN}")])
        .arg("-s")
        .arg(&script)
        .arg(base)
        .output()
        .expect("running wrk (Debian package wrk; scripts/bench.sh installs it)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "wrk: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let duration = |v: &str| -> Duration {
        let (n, unit) = v.split_at(v.find(|c: char| c.is_ascii_alphabetic()).unwrap());
        let n: f64 = n.parse().unwrap();
        Duration::from_secs_f64(match unit {
            "us" => n / 1e6,
            "ms" => n / 1e3,
            "s" => n,
            "m" => n * 60.0,
            other => panic!("wrk latency unit {other}"),
        })
    };
    let field = |prefix: &str| -> Option<&str> {
        text.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(prefix))
            .map(str::trim)
    };
    let requests: usize = text
        .lines()
        .find(|l| l.contains("requests in"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("wrk: {text}"));
    let errors = field("Non-2xx or 3xx responses:")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    Load {
        requests,
        errors,
        per_second: field("Requests/sec:").unwrap().parse().unwrap(),
        p50: duration(field("50%").unwrap()),
        p99: duration(field("99%").unwrap()),
    }
}

/// Writes `hosts` hosts, spread over the pod managers, straight into the SQLite database.
async fn seed(data_dir: &std::path::Path, pod_managers: &[String], hosts: usize) -> Vec<String> {
    use sqlx::Connection;
    let url = format!("sqlite://{}", data_dir.join("podium.db").display());
    let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let now = "2026-12-01T00:00:00.000000Z";
    let mut ids = Vec::with_capacity(hosts);
    let mut tx = db.begin().await.unwrap();
    for i in 0..hosts {
        let id = format!("01a20000-0000-7000-8000-{i:012x}");
        let pm = &pod_managers[i % pod_managers.len()];
        let nics = json!([{"id": "1", "name": "eth0", "mac": format!("52:54:00:{:02x}:{:02x}:{:02x}", i >> 16 & 0xff, i >> 8 & 0xff, i & 0xff), "speed_mbps": 10000}]);
        let slots =
            json!([{"id": "Cd", "media_types": ["cd", "dvd"], "inserted": false, "image": null}]);
        sqlx::query(
            "INSERT INTO hosts (id, pod_manager, system_id, kind, name, uuid, manufacturer, model, \
             serial, cpu_count, memory_mib, nics, media_slots, boot, power_state, state, \
             created_at, updated_at, last_seen_at) VALUES ($1, $2, $3, 'system', $4, $5, \
             'Podium Bench', 'B1', $6, 32, 262144, $7, $8, NULL, 'off', 'available', $9, $9, $9)",
        )
        .bind(&id)
        .bind(pm)
        .bind(format!("/redfish/v1/Systems/{i}"))
        .bind(format!("node-{i}"))
        .bind(format!("00000000-0000-4000-8000-{i:012x}"))
        .bind(format!("SN{i:08}"))
        .bind(nics.to_string())
        .bind(slots.to_string())
        .bind(now)
        .execute(&mut *tx)
        .await
        .unwrap();
        sqlx::query("INSERT INTO host_labels (host_id, key, value) VALUES ($1, 'rack', $2)")
            .bind(&id)
            .bind(format!("r{}", i % 40))
            .execute(&mut *tx)
            .await
            .unwrap();
        ids.push(id);
    }
    tx.commit().await.unwrap();
    ids
}

fn mib(kib: u64) -> String {
    format!("{:.0} MiB", kib as f64 / 1024.0)
}

fn main() {
    let [hosts, seconds, clients] = podium_tests::bench_args([10_000, 10, 32]);
    let seconds = seconds as u64;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let data = tempfile::tempdir().unwrap();
        // Idle: a fresh server, its bundled plugins loaded.
        let server = ProcessServer::start(BIN, data.path(), None).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (idle, _) = server.usage().expect("the server's memory");
        let admin = server.admin();
        let mut pod_managers = Vec::new();
        for i in 0..POD_MANAGERS {
            // Unreachable endpoints: the probes fail at once, nothing is discovered.
            let pm = admin
                .post(
                    "/v1/pod_managers",
                    json!({"name": format!("site-{i}"), "url": format!("http://127.0.0.1:{}", 1 + i)}),
                )
                .await;
            assert!(pm.status.is_success(), "{}", pm.text);
            pod_managers.push(pm.body["uuid"].as_str().unwrap().to_owned());
        }
        server.kill9().await;
        let ids = seed(data.path(), &pod_managers, hosts).await;
        let server = ProcessServer::start(BIN, data.path(), None).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (loaded, _) = server.usage().unwrap();

        // The baselines: the same server answering without authentication or the database, and
        // with one round trip to the database.
        let ceiling = load(&server.url, clients, seconds, &["/livez".to_owned()]);
        let ping = load(&server.url, clients, seconds, &["/healthz".to_owned()]);
        let single = load(
            &server.url,
            clients,
            seconds,
            &[format!("/v1/hosts/{}", ids[ids.len() / 2])],
        );
        // The same host as a Redfish system (the admin's bearer token; Podium's Redfish service).
        let redfish = load(
            &server.url,
            clients,
            seconds,
            &[format!("/redfish/v1/Systems/{}", ids[ids.len() / 2])],
        );
        // Pages of 100 from cursors spread over the whole list.
        let pages: Vec<String> = ids
            .iter()
            .step_by(97)
            .map(|c| format!("/v1/hosts?limit=100&cursor={c}"))
            .collect();
        let paged = load(&server.url, clients, seconds, &pages);
        let (after, cpu) = server.usage().unwrap();

        println!("{hosts} hosts, {POD_MANAGERS} pod managers, SQLite; {clients} clients for {seconds} s each");
        println!();
        println!("| request | requests/s | of the baseline | p50 | p99 | requests (errors) |");
        println!("|---|---|---|---|---|---|");
        for (name, l) in [
            ("`GET /livez` (baseline: no authentication, no database)", &ceiling),
            ("`GET /healthz` (no authentication, `SELECT 1`)", &ping),
            ("`GET /v1/hosts/{id}`", &single),
            ("`GET /redfish/v1/Systems/{id}` (the same host, Redfish)", &redfish),
            ("`GET /v1/hosts?limit=100&cursor=...` (100 hosts a page)", &paged),
        ] {
            println!(
                "| {name} | {:.0} | {:.2} | {:.2} ms | {:.2} ms | {} ({}) |",
                l.per_second,
                l.per_second / ceiling.per_second,
                l.p50.as_secs_f64() * 1e3,
                l.p99.as_secs_f64() * 1e3,
                l.requests,
                l.errors
            );
        }
        println!();
        println!("| podium serve | resident memory |");
        println!("|---|---|");
        println!("| idle (fresh, bundled plugins) | {} |", mib(idle));
        println!(
            "| {hosts} hosts, {POD_MANAGERS} pod managers, after start | {} |",
            mib(loaded)
        );
        println!(
            "| the same, after both load runs | {} (server CPU {:.1} s) |",
            mib(after),
            cpu.as_secs_f64()
        );
        server.kill9().await;
    });
}
