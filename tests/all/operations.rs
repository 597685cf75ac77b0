//! Durable operations against the Redfish emulator: retried while the BMC is down, failed with
//! the reason when it stays down or refuses, and finished after `kill -9` of Podium, by the same
//! process restarted or (on PostgreSQL) by another one taking over the dead one's leases.

use std::collections::BTreeMap;
use std::time::Duration;

use podium_tests::sushy::{FakeSystem, Sushy, SushyConfig};
use podium_tests::{Client, ProcessServer, TestServer, eventually};
use podium_types::views::{HostView, List, OperationView, PodManagerView};
use podium_types::{OperationId, OperationKind, OperationStatus as Status, Timestamp};
use reqwest::StatusCode;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");

/// Every power operation of a pod manager, by id.
async fn operations(admin: &Client, pm: &str) -> BTreeMap<OperationId, OperationView> {
    let mut out = BTreeMap::new();
    let mut cursor = String::new();
    loop {
        let page = admin
            .get(&format!(
                "/v1/operations?pod_manager={pm}&limit=1000{cursor}"
            ))
            .await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        let page: List<OperationView> = page.view();
        for op in page.items {
            if op.kind == OperationKind::Power {
                out.insert(op.id.clone(), op);
            }
        }
        match page.next {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return out,
        }
    }
}

/// Registers the Redfish service at `url` as the pod manager `name` and waits for its
/// `systems` hosts.
async fn register(
    admin: &Client,
    name: &str,
    url: &str,
    systems: usize,
) -> (String, Vec<HostView>) {
    let pm = admin
        .created("/v1/pod_managers", json!({ "name": name, "url": url }))
        .await
        .body["uuid"]
        .as_str()
        .unwrap()
        .to_owned();
    let hosts = admin.systems_in_state(&pm, systems, "available").await;
    (pm, hosts)
}

async fn operation(admin: &Client, id: impl std::fmt::Display) -> OperationView {
    let reply = admin.get(&format!("/v1/operations/{id}")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply.view()
}

/// `n` systems (101, 102, ...) of one emulator, each behind a proxy of its own answering in
/// 300 ms: hosts with their own BMC at a BMC's latency. The emulator lives as long as the first.
async fn own_bmcs(n: usize) -> (Sushy, Vec<podium_tests::FaultProxy>) {
    let mut config = SushyConfig::with_systems(0);
    config.systems = (1..=n as u32)
        .map(|i| FakeSystem::numbered(100 + i))
        .collect();
    let own = Sushy::start(config).await.unwrap();
    let mut proxies = Vec::new();
    for i in 1..=n as u32 {
        let system = FakeSystem::numbered(100 + i).uuid;
        let proxy = podium_tests::FaultProxy::start_one_system(&own.url(), &system).await;
        proxy
            .delay_ms
            .store(300, std::sync::atomic::Ordering::Release);
        proxies.push(proxy);
    }
    (own, proxies)
}

/// Registers the system behind each of `proxies` (as `own_bmcs` made them) as a host of `pm`
/// with its own BMC, and waits until every one is available; answers their ids.
async fn register_own(
    admin: &Client,
    pm: &str,
    proxies: &[podium_tests::FaultProxy],
) -> Vec<String> {
    let mut ids = Vec::new();
    for (i, proxy) in proxies.iter().enumerate() {
        let body = json!({"pod_manager": pm, "bmc": {"url": proxy.url(),
            "system_id": FakeSystem::numbered(101 + i as u32).uuid}});
        let host: HostView = admin.created("/v1/hosts", body).await.view();
        ids.push(host.id.to_string());
    }
    eventually(Duration::from_secs(60), "own hosts available", || async {
        let available = admin
            .hosts_all(&format!("&pod_manager={pm}&state=available"))
            .await;
        ids.iter()
            .all(|id| available.iter().any(|h| h.id.as_str() == id))
            .then_some(())
    })
    .await;
    ids
}

#[tokio::test]
async fn a_bmc_down_for_a_while_is_retried_one_down_for_good_or_refusing_fails_with_the_reason() {
    let server = TestServer::start_with(|c| {
        c.probe_interval = Duration::from_millis(300);
        c.sync_interval = Duration::from_secs(3600);
        c.operations.retry_base = Duration::from_millis(200);
        c.operations.max_attempts = 4;
    })
    .await;
    let mut config = SushyConfig::with_systems(1);
    config.basic_auth = Some(("admin".into(), "right-password".into()));
    let mut bmc = Sushy::start(config).await.unwrap();
    let admin = server.admin();
    let pm = admin.created("/v1/pod_managers",
            json!({"name": "site", "url": bmc.url(), "auth": {"username": "admin", "password": "right-password"}})).await;
    let pm = pm.view::<PodManagerView>().uuid.to_string();
    let host = admin.systems_in_state(&pm, 1, "available").await.remove(0);
    let host_id = host.id.to_string();
    let system = host.system_id;

    // Down for a while: the operation waits in the queue between tries, saying why.
    bmc.stop().await;
    let op = admin.power(&host_id, "on").await;
    let waiting = eventually(Duration::from_secs(20), "a failed try", || async {
        let o = operation(&admin, &op).await;
        (o.status == Status::Queued && o.attempts >= 1 && o.error.is_some()).then_some(o)
    })
    .await;
    assert!(
        waiting
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("unreachable"),
        "{waiting:?}"
    );
    assert!(waiting.next_attempt_at.is_some(), "{waiting:?}");
    // Back: the next try succeeds, and the BMC is on.
    bmc.restart().await.unwrap();
    let done = eventually(Duration::from_secs(20), "the retry", || async {
        let o = operation(&admin, &op).await;
        (o.status != Status::Queued && o.status != Status::Running).then_some(o)
    })
    .await;
    assert_eq!(done.status, Status::Succeeded, "{done:?}");
    assert!(done.attempts >= 2, "{done:?}");
    assert_eq!(bmc.get_json(&system).await.unwrap()["PowerState"], "On");

    // Down for good: failed after the bound, with the reason; the pod manager shows offline.
    bmc.stop().await;
    let op = admin.power(&host_id, "off").await;
    let failed = eventually(Duration::from_secs(30), "giving up", || async {
        let o = operation(&admin, &op).await;
        (o.status == Status::Failed).then_some(o)
    })
    .await;
    assert_eq!(failed.attempts, 4, "{failed:?}");
    let error = failed.error.as_deref().unwrap_or_default();
    assert!(error.contains("gave up after 4 attempts"), "{error}");
    assert!(error.contains("unreachable"), "{error}");
    eventually(Duration::from_secs(10), "pod manager offline", || async {
        (admin.get(&format!("/v1/pod_managers/{pm}")).await.body["status"] == "offline")
            .then_some(())
    })
    .await;

    // A refusal is permanent: failed at the first try, in the plugin's words.
    bmc.restart().await.unwrap();
    let patched = admin
        .patch(
            &format!("/v1/pod_managers/{pm}"),
            json!({"auth": {"username": "admin", "password": "wrong-password"}}),
        )
        .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.text);
    let op = admin.power(&host_id, "on").await;
    let refused = eventually(Duration::from_secs(20), "the refusal", || async {
        let o = operation(&admin, &op).await;
        (o.status == Status::Failed).then_some(o)
    })
    .await;
    assert_eq!(refused.attempts, 1, "{refused:?}");
    assert!(
        refused
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("unauthorized"),
        "{refused:?}"
    );
    assert!(
        !serde_json::to_string(&refused)
            .unwrap()
            .contains("wrong-password")
    );
}

/// Powers on 100 hosts, kills Podium with `kill -9` while the operations run, and restarts it:
/// every operation ends succeeded and every system is on. On PostgreSQL a second process runs
/// beside the first from the start and takes over the dead one's leases.
#[tokio::test]
async fn operations_survive_kill_9_and_end_as_asked() {
    const HOSTS: usize = 100;
    let bmc = Sushy::start(SushyConfig::with_systems(HOSTS as u32))
        .await
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    // One operation at a time per process, so that most are still to run when the kill comes;
    // a lease of 1 s, so that a dead process's operations are taken over soon.
    let options = [
        "--operations-per-pod-manager",
        "1",
        "--operation-lease",
        "1",
    ];
    let server = ProcessServer::start_logging(BIN, data.path(), url, "info", &options).await;
    let admin = server.admin();
    let (pm, hosts) = register(&admin, "site", &bmc.url(), HOSTS).await;
    // On PostgreSQL, a second process on the same database (its own data directory).
    let other_data = tempfile::tempdir().unwrap();
    let other = match url {
        Some(url) => Some(
            ProcessServer::start_logging(BIN, other_data.path(), Some(url), "info", &options).await,
        ),
        None => None,
    };
    for host in &hosts {
        admin.power(host.id.as_str(), "on").await;
    }
    // Kill as soon as a few have finished.
    let before = eventually(Duration::from_secs(60), "the first operations", || async {
        let ops = operations(&admin, &pm).await;
        let done = ops
            .values()
            .filter(|o| o.status == Status::Succeeded)
            .count();
        (done >= 3).then_some(ops)
    })
    .await;
    server.kill9().await;
    let unfinished = before
        .values()
        .filter(|o| o.status != Status::Succeeded)
        .count();
    assert!(
        unfinished > HOSTS / 2,
        "the kill came too late to test anything: {unfinished} unfinished"
    );

    // Restarted (or, on PostgreSQL, the other process alone): every operation ends succeeded.
    let restarted;
    let admin = match &other {
        Some(other) => other.admin(),
        None => {
            restarted = ProcessServer::start_logging(BIN, data.path(), url, "info", &options).await;
            restarted.admin()
        }
    };
    let after = eventually(
        Duration::from_secs(120),
        "every operation finished",
        || async {
            let ops = operations(&admin, &pm).await;
            ops.values()
                .all(|o| o.status == Status::Succeeded || o.status == Status::Failed)
                .then_some(ops)
        },
    )
    .await;
    assert_eq!(after.len(), HOSTS, "no operation lost or added");
    let failed: Vec<&OperationView> = after
        .values()
        .filter(|o| o.status != Status::Succeeded)
        .collect();
    assert!(failed.is_empty(), "failed: {failed:?}");
    // The emulator's state is what was asked.
    for host in &hosts {
        let system = &host.system_id;
        assert_eq!(
            bmc.get_json(system).await.unwrap()["PowerState"],
            "On",
            "{system}"
        );
    }
}

/// SIGTERM, as an orchestrator stops a replica: the operation that ends within the grace ends in
/// the stopping process; the one that cannot is handed back, and the next process (on SQLite the
/// same one restarted; on PostgreSQL another) runs it at once, where its 10-minute lease would
/// otherwise hold it, without counting the interrupted attempt.
#[tokio::test]
async fn sigterm_lets_running_operations_finish_and_hands_back_the_rest() {
    let (quick_bmc, slow_bmc) = (
        Sushy::start(SushyConfig::with_systems(1)).await.unwrap(),
        Sushy::start(SushyConfig::with_systems(1)).await.unwrap(),
    );
    let quick = podium_tests::FaultProxy::start(&quick_bmc.url()).await;
    let slow = podium_tests::FaultProxy::start(&slow_bmc.url()).await;
    let data = tempfile::tempdir().unwrap();
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    let options = [
        "--operation-lease",
        "600",
        "--shutdown-grace",
        "8",
        "--plugin-timeout",
        "120",
    ];
    let first = ProcessServer::start_logging(BIN, data.path(), url, "info", &options).await;
    let admin = first.admin();
    let (_, quick_hosts) = register(&admin, "quick", &quick.url(), 1).await;
    let (_, slow_hosts) = register(&admin, "slow", &slow.url(), 1).await;
    // The quick BMC answers in 1.5 s; the slow one takes a minute, past the grace.
    quick
        .delay_ms
        .store(1_500, std::sync::atomic::Ordering::Release);
    slow.delay_ms
        .store(60_000, std::sync::atomic::Ordering::Release);
    let quick_op = admin.power(quick_hosts[0].id.as_str(), "on").await;
    let slow_op = admin.power(slow_hosts[0].id.as_str(), "on").await;
    eventually(
        Duration::from_secs(30),
        "both operations running",
        || async {
            (operation(&admin, &quick_op).await.status == Status::Running
                && operation(&admin, &slow_op).await.status == Status::Running)
                .then_some(())
        },
    )
    .await;

    let (status, log) = first.terminate().await;
    assert!(status.success(), "podium exited with {status}: {log}");
    let handed_back: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("handed back operations"))
        .collect();
    assert_eq!(handed_back.len(), 1, "{log}");
    assert!(
        handed_back[0].contains(slow_op.as_str()),
        "{}",
        handed_back[0]
    );
    assert!(
        !handed_back[0].contains(quick_op.as_str()),
        "{}",
        handed_back[0]
    );

    slow.delay_ms.store(0, std::sync::atomic::Ordering::Release);
    let other_data = tempfile::tempdir().unwrap();
    let next_dir = if url.is_some() {
        other_data.path()
    } else {
        data.path()
    };
    let next = ProcessServer::start_logging(BIN, next_dir, url, "info", &options).await;
    let admin = next.admin();
    let quick_done = operation(&admin, &quick_op).await;
    assert_eq!(quick_done.status, Status::Succeeded, "{quick_done:?}");
    assert_eq!(quick_done.attempts, 1, "{quick_done:?}");
    let slow_done = eventually(
        Duration::from_secs(60),
        "the handed-back operation",
        || async {
            let o = operation(&admin, &slow_op).await;
            (o.status == Status::Succeeded || o.status == Status::Failed).then_some(o)
        },
    )
    .await;
    assert_eq!(slow_done.status, Status::Succeeded, "{slow_done:?}");
    assert_eq!(slow_done.attempts, 1, "{slow_done:?}");
    for (bmc, hosts) in [(&quick_bmc, &quick_hosts), (&slow_bmc, &slow_hosts)] {
        let system = &hosts[0].system_id;
        assert_eq!(bmc.get_json(system).await.unwrap()["PowerState"], "On");
    }
}

#[tokio::test]
async fn a_bmc_answering_500_for_a_while_is_retried_until_it_recovers() {
    let server = TestServer::start_with(|c| {
        c.probe_interval = Duration::from_secs(3600);
        c.sync_interval = Duration::from_secs(3600);
        c.operations.retry_base = Duration::from_millis(200);
        c.operations.max_attempts = 8;
    })
    .await;
    let bmc = Sushy::start(SushyConfig::with_systems(1)).await.unwrap();
    let proxy = podium_tests::FaultProxy::start(&bmc.url()).await;
    let admin = server.admin();
    let pm = admin.create_site(&proxy.url()).await;
    let host = admin.systems_in_state(&pm, 1, "available").await.remove(0);
    let system = host.system_id.clone();

    proxy
        .failing
        .store(true, std::sync::atomic::Ordering::Release);
    let op = admin.power(host.id.as_ref(), "on").await;
    let waiting = eventually(Duration::from_secs(20), "tries that got a 500", || async {
        let o = operation(&admin, &op).await;
        (o.status == Status::Queued && o.attempts >= 2).then_some(o)
    })
    .await;
    assert!(
        waiting.error.as_deref().unwrap_or_default().contains("500"),
        "{waiting:?}"
    );
    assert_eq!(bmc.get_json(&system).await.unwrap()["PowerState"], "Off");
    proxy
        .failing
        .store(false, std::sync::atomic::Ordering::Release);
    let done = eventually(Duration::from_secs(20), "the retry", || async {
        let o = operation(&admin, &op).await;
        (o.status == Status::Succeeded || o.status == Status::Failed).then_some(o)
    })
    .await;
    assert_eq!(done.status, Status::Succeeded, "{done:?}");
    assert_eq!(bmc.get_json(&system).await.unwrap()["PowerState"], "On");
}

/// The most operations running at one moment, with the starts (1) and ends (-1) it was read
/// from. Ends before starts at the same instant: an operation leased as another ended is not
/// counted twice.
fn most_at_once(ops: Vec<&OperationView>) -> (i32, Vec<(Timestamp, i32)>) {
    let mut events: Vec<(Timestamp, i32)> = Vec::new();
    for o in ops {
        events.push((o.started_at.expect("started"), 1));
        events.push((o.finished_at.expect("finished"), -1));
    }
    events.sort();
    let (mut running, mut most) = (0, 0);
    for (_, change) in &events {
        running += change;
        most = most.max(running);
    }
    (most, events)
}

/// At most the service limit of a site (the pod manager's `limits.service`, over the server's
/// `--operations-per-pod-manager`) of its operations at its shared Redfish service run at once,
/// however many processes share the database (two, on PostgreSQL): no moment lies inside more
/// than that many of its operations' `[started_at, finished_at]`. Hosts of the same site with a
/// BMC of their own (each behind a proxy answering in 300 ms) are not held to that limit: theirs
/// run side by side.
#[tokio::test]
async fn the_per_site_limit_holds_across_processes_and_spares_hosts_with_their_own_bmc() {
    const HOSTS: usize = 12;
    const OWN: usize = 6;
    const LIMIT: usize = 2;
    let bmc = Sushy::start(SushyConfig::with_systems(HOSTS as u32))
        .await
        .unwrap();
    let (_own, proxies) = own_bmcs(OWN).await;
    let data = tempfile::tempdir().unwrap();
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    let options = ["--operations-per-pod-manager", "3"];
    let server = ProcessServer::start_logging(BIN, data.path(), url, "info", &options).await;
    let admin = server.admin();
    let (pm, hosts) = register(&admin, "site", &bmc.url(), HOSTS).await;
    let limited = admin
        .patch(
            &format!("/v1/pod_managers/{pm}"),
            json!({"limits": {"service": LIMIT}}),
        )
        .await;
    assert_eq!(limited.status, StatusCode::OK, "{}", limited.text);
    let other_data = tempfile::tempdir().unwrap();
    let _other = match url {
        Some(url) => Some(
            ProcessServer::start_logging(BIN, other_data.path(), Some(url), "info", &options).await,
        ),
        None => None,
    };
    let own_ids = register_own(&admin, &pm, &proxies).await;
    for host in hosts.iter().map(|h| h.id.as_str()) {
        admin.power(host, "on").await;
    }
    for host in &own_ids {
        admin.power(host, "on").await;
    }
    let ops = eventually(
        Duration::from_secs(60),
        "every operation finished",
        || async {
            let ops = operations(&admin, &pm).await;
            (ops.len() == HOSTS + OWN && ops.values().all(|o| o.status == Status::Succeeded))
                .then_some(ops)
        },
    )
    .await;
    let most = most_at_once;
    let is_own = |o: &&OperationView| {
        own_ids
            .iter()
            .any(|id| o.host.as_ref().is_some_and(|h| h.as_str() == id))
    };
    let (shared, events) = most(ops.values().filter(|o| !is_own(o)).collect());
    assert!(shared <= LIMIT as i32, "{shared} ran at once: {events:?}");
    assert_eq!(
        shared, LIMIT as i32,
        "the limit was never reached: {events:?}"
    );
    let (side_by_side, events) = most(ops.values().filter(is_own).collect());
    assert!(
        side_by_side > LIMIT as i32,
        "hosts with their own BMC were held to the site's limit: {events:?}"
    );
}

/// An admin who sets a limit for a site holds every operation of it to that limit, its hosts
/// with their own BMC included (each behind a proxy answering in 300 ms), across processes (two,
/// on PostgreSQL); a limit out of range is refused naming its field, and a limit set to `null`
/// goes back to the default (none: the same hosts then run side by side).
#[tokio::test]
async fn a_site_limit_the_admin_sets_holds_hosts_with_their_own_bmc_to_it() {
    const OWN: usize = 6;
    const LIMIT: i32 = 2;
    let (_own, proxies) = own_bmcs(OWN).await;
    let site = Sushy::start(SushyConfig::with_systems(0)).await.unwrap();
    let data = tempfile::tempdir().unwrap();
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    let server = ProcessServer::start_logging(BIN, data.path(), url, "info", &[]).await;
    let admin = server.admin();
    let (pm, _) = register(&admin, "site", &site.url(), 0).await;
    let path = format!("/v1/pod_managers/{pm}");
    eventually(Duration::from_secs(60), "the site online", || async {
        (admin.get(&path).await.body["status"] == "online").then_some(())
    })
    .await;
    assert_eq!(
        admin.get(&path).await.body["limits"],
        json!({"service": null, "site": null, "requests": null})
    );
    for (limits, field) in [
        (json!({"site": 0}), "limits.site"),
        (json!({"service": 10001}), "limits.service"),
        (json!({"site": -1}), "limits.site"),
        (json!({"requests": 0}), "limits.requests"),
        (json!({"requests": 10001}), "limits.requests"),
        (json!({"site": 2, "sites": 3}), "limits"),
    ] {
        let refused = admin.patch(&path, json!({ "limits": limits })).await;
        assert!(
            refused.status.is_client_error(),
            "{limits}: {}",
            refused.text
        );
        assert!(
            refused.body["error"]["field"]
                .as_str()
                .is_some_and(|f| f.starts_with(field)),
            "{limits}: {}",
            refused.text
        );
    }
    let other_data = tempfile::tempdir().unwrap();
    let _other = match url {
        Some(url) => {
            Some(ProcessServer::start_logging(BIN, other_data.path(), Some(url), "info", &[]).await)
        }
        None => None,
    };
    let own_ids = register_own(&admin, &pm, &proxies).await;
    let set = admin.patch(&path, json!({"limits": {"site": LIMIT}})).await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text);
    assert_eq!(
        set.body["limits"],
        json!({"service": null, "site": LIMIT, "requests": null})
    );
    // Powers every host on (then off), and answers the most that ran at once.
    let round = |action: &'static str| {
        let (admin, pm, own_ids) = (&admin, &pm, &own_ids);
        async move {
            let before = operations(admin, pm).await;
            for host in own_ids {
                admin.power(host, action).await;
            }
            let ops = eventually(Duration::from_secs(60), "every power finished", || async {
                let ops: Vec<OperationView> = operations(admin, pm)
                    .await
                    .into_iter()
                    .filter(|(id, _)| !before.contains_key(id))
                    .map(|(_, o)| o)
                    .collect();
                (ops.len() == OWN && ops.iter().all(|o| o.status == Status::Succeeded))
                    .then_some(ops)
            })
            .await;
            most_at_once(ops.iter().collect())
        }
    };
    let (most, events) = round("on").await;
    assert!(most <= LIMIT, "{most} ran at once: {events:?}");
    assert_eq!(most, LIMIT, "the limit was never reached: {events:?}");

    let unset = admin.patch(&path, json!({"limits": {"site": null}})).await;
    assert_eq!(unset.status, StatusCode::OK, "{}", unset.text);
    assert_eq!(
        unset.body["limits"],
        json!({"service": null, "site": null, "requests": null})
    );
    let (most, events) = round("off").await;
    assert!(
        most > LIMIT,
        "the site stayed limited after its limit was removed: {events:?}"
    );
}

/// A site's `limits.requests` bounds how many requests one call sends its shared service at
/// once, so how far a sync's reads of its systems fan out: with 4, a sync of 30 systems behind a
/// proxy answering in 150 ms never has more than 4 requests at the proxy and reaches 4; with 24,
/// it goes past the server's default of 16. (Nothing else reads the service meanwhile: the
/// periodic probe and refresh are an hour apart.)
#[tokio::test]
async fn a_sites_request_limit_bounds_how_far_its_sync_fans_out() {
    use std::sync::atomic::Ordering;
    const SYSTEMS: usize = 30;
    let bmc = Sushy::start(SushyConfig::with_systems(SYSTEMS as u32))
        .await
        .unwrap();
    let proxy = podium_tests::FaultProxy::start(&bmc.url()).await;
    let data = tempfile::tempdir().unwrap();
    let options = ["--sync-interval", "3600", "--probe-interval", "3600"];
    let server = ProcessServer::start_logging(BIN, data.path(), None, "info", &options).await;
    let admin = server.admin();
    let (pm, _) = register(&admin, "site", &proxy.url(), SYSTEMS).await;
    let path = format!("/v1/pod_managers/{pm}");
    proxy.delay_ms.store(150, Ordering::Release);
    let mut most = Vec::new();
    for limit in [4, 24] {
        let set = admin
            .patch(&path, json!({"limits": {"requests": limit}}))
            .await;
        assert_eq!(set.status, StatusCode::OK, "{}", set.text);
        assert_eq!(set.body["limits"]["requests"], limit);
        proxy.most_at_once.store(0, Ordering::Release);
        let sync = admin.post(&format!("{path}/sync"), json!({})).await;
        assert_eq!(sync.status, StatusCode::ACCEPTED, "{}", sync.text);
        let op = sync.view::<OperationView>().id;
        eventually(Duration::from_secs(120), "the sync finished", || async {
            let op: OperationView = admin.get(&format!("/v1/operations/{op}")).await.view();
            assert_ne!(op.status, Status::Failed, "{:?}", op.error);
            (op.status == Status::Succeeded).then_some(())
        })
        .await;
        most.push(proxy.most_at_once.load(Ordering::Acquire));
    }
    assert_eq!(most[0], 4, "with a limit of 4: {most:?}");
    assert!(
        (17..=24).contains(&most[1]),
        "with a limit of 24, past the default 16: {most:?}"
    );
}

/// Operations queued by the release before the store had its own formats (their requests the
/// API's bodies, stored as they came; `reboot` among the power actions) run after the upgrade
/// as they were asked to.
#[tokio::test]
async fn operations_queued_by_an_earlier_release_run_after_the_upgrade() {
    use sqlx::Connection;
    let bmc = Sushy::start(SushyConfig::with_systems(2)).await.unwrap();
    let server = TestServer::start().await;
    let admin = server.admin();
    let (pm, hosts) = register(&admin, "site", &bmc.url(), 2).await;
    let (one, two) = (&hosts[0], &hosts[1]);

    sqlx::any::install_default_drivers();
    let mut db = sqlx::AnyConnection::connect(&server.database_url())
        .await
        .unwrap();
    // What that release wrote, to the letter: the power body with `reboot`, the boot body
    // with `mode` null, the media body tagged by `action`. Ids after every real one, due now.
    let rows = [
        (
            "fffffff0-0000-7000-8000-000000000001",
            "boot",
            one,
            r#"{"target":"cd","persistence":"continuous","mode":null}"#,
        ),
        (
            "fffffff0-0000-7000-8000-000000000002",
            "power",
            one,
            r#"{"action":"on"}"#,
        ),
        (
            "fffffff0-0000-7000-8000-000000000003",
            "power",
            two,
            r#"{"action":"reboot"}"#,
        ),
        (
            "fffffff0-0000-7000-8000-000000000004",
            "media",
            two,
            r#"{"action":"eject","media_type":"cd"}"#,
        ),
    ];
    for (id, kind, host, request) in rows {
        sqlx::query(
            "INSERT INTO operations (id, kind, status, pod_manager, host_id, request, created_at, \
             attempts) VALUES ($1, $2, 'queued', $3, $4, $5, '2026-01-01T00:00:00.000000Z', 0)",
        )
        .bind(id)
        .bind(kind)
        .bind(&pm)
        .bind(host.id.as_str())
        .bind(request)
        .execute(&mut db)
        .await
        .unwrap();
    }
    db.close().await.unwrap();

    for (id, kind, _, _) in rows {
        let op = eventually(Duration::from_secs(60), "the old operation ran", || async {
            let op = operation(&admin, id).await;
            (op.status == Status::Succeeded || op.status == Status::Failed).then_some(op)
        })
        .await;
        assert_eq!(op.status, Status::Succeeded, "{op:?}");
        assert_eq!(op.kind.to_string(), kind, "{op:?}");
    }
    // Shown as the API always showed it, and carried out as asked.
    let reboot = operation(&admin, rows[2].0).await;
    assert_eq!(
        serde_json::to_value(&reboot.request).unwrap(),
        json!({"action": "force_restart"}),
        "{reboot:?}"
    );
    let system = bmc.get_json(&one.system_id).await.unwrap();
    assert_eq!(system["PowerState"], "On", "{system}");
    assert_eq!(system["Boot"]["BootSourceOverrideTarget"], "Cd", "{system}");
    assert_eq!(
        system["Boot"]["BootSourceOverrideEnabled"], "Continuous",
        "{system}"
    );
    server.stop().await;
}
