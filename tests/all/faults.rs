//! Fault containment: a plugin that loops, eats memory, traps, reaches for a host it was not
//! given, or returns nonsense fails its own call with an error that says which, and the host
//! keeps serving: the next call of a well-behaved plugin succeeds.

use std::time::{Duration, Instant};

use podium_runtime::{
    CallContext, CallError, Endpoint, HttpBudget, Plugin, PluginError, TlsPolicy,
};
use podium_tests::{ConnectionCounter, ImageServer, TestServer, guests};
use reqwest::StatusCode;

const DEADLINE: Duration = Duration::from_secs(1);
const MEMORY: usize = 32 << 20;

async fn server() -> TestServer {
    TestServer::start_with(|c| {
        c.plugin_timeout = DEADLINE;
        c.discover_timeout = DEADLINE;
        c.plugin_memory = MEMORY;
    })
    .await
}

async fn faulty(server: &TestServer) -> Plugin {
    server
        .podium
        .runtime()
        .load(guests::FAULTY.into())
        .await
        .expect("faulty guest loads")
}

fn context(fault: &str, endpoint: Option<Endpoint>) -> CallContext {
    CallContext {
        config: serde_json::json!({"fault": fault, "target": "http://127.0.0.1:9/"}).to_string(),
        endpoint,
        allocations: None,
    }
}

/// The real `podium` process (for its log and its memory) with these `serve` options, over a
/// fresh data directory and (with `PODIUM_TEST_DATABASE=postgres`) database, kept with it.
async fn process_server(
    options: &[&str],
) -> (
    podium_tests::ProcessServer,
    tempfile::TempDir,
    Option<podium_tests::PostgresDatabase>,
) {
    const BIN: &str = env!("CARGO_BIN_EXE_podium-under-test");
    let data = tempfile::tempdir().unwrap();
    let database = podium_tests::PostgresDatabase::for_this_run().await;
    let server = podium_tests::ProcessServer::start_logging(
        BIN,
        data.path(),
        database.as_ref().map(|d| d.url.as_str()),
        "info",
        options,
    )
    .await;
    (server, data, database)
}

/// The error of a `discover` call of `plugin` in `ctx`, which must fail.
async fn discover_error(server: &TestServer, plugin: &Plugin, ctx: CallContext) -> CallError {
    server
        .podium
        .runtime()
        .driver(plugin, ctx)
        .discover()
        .await
        .expect_err("the call must fail")
}

/// After a fault: the server answers and a well-behaved call succeeds.
async fn still_healthy(server: &TestServer, plugin: &Plugin) {
    let health = server.client(None).get("/healthz").await;
    assert_eq!(health.status, StatusCode::OK);
    let systems = server
        .podium
        .runtime()
        .driver(plugin, context("ok", None))
        .discover()
        .await
        .expect("a well-behaved call after the fault");
    assert_eq!(systems.len(), 1);
    assert_eq!(systems[0].nics[0].mac, "52:54:00:00:00:01");
}

#[tokio::test]
async fn a_plugin_that_loops_forever_fails_at_its_deadline() {
    let server = server().await;
    let plugin = faulty(&server).await;
    let started = Instant::now();
    let err = discover_error(&server, &plugin, context("spin", None)).await;
    let elapsed = started.elapsed();
    assert!(matches!(err, CallError::Deadline { .. }), "{err:?}");
    assert!(err.to_string().contains("deadline of 1s"), "{err}");
    // Fails at the deadline, not long after it (a generous bound: this is containment, not speed).
    assert!(elapsed < DEADLINE * 3, "took {elapsed:?}");
    still_healthy(&server, &plugin).await;
}

#[tokio::test]
async fn a_spinning_plugin_does_not_block_other_calls() {
    let server = server().await;
    let plugin = faulty(&server).await;
    let runtime = server.podium.runtime().clone();
    let spinning = {
        let (runtime, plugin) = (runtime.clone(), plugin.clone());
        tokio::spawn(async move {
            runtime
                .driver(&plugin, context("spin", None))
                .discover()
                .await
        })
    };
    // While it spins, the API answers and another plugin call completes.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let ok = runtime
        .driver(&plugin, context("ok", None))
        .discover()
        .await;
    assert!(ok.is_ok(), "{ok:?}");
    assert!(
        !spinning.is_finished(),
        "the spinning call should still be running"
    );
    assert_eq!(
        server.client(None).get("/healthz").await.status,
        StatusCode::OK
    );
    assert!(matches!(
        spinning.await.unwrap(),
        Err(CallError::Deadline { .. })
    ));
}

/// With every instance busy, a call waits for one: the wait is not its deadline (a call queued
/// behind a slow one, here a discovery spinning for longer than an ordinary call's deadline,
/// still gets all of its own time), and a call that waits past the bound fails as `Busy`, which
/// is worth trying again, not as the plugin's fault. (On several threads, as the server runs: on
/// one, the spinning plugin's yields delay the timers the wait is measured by.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waiting_for_an_instance_keeps_its_deadline_and_fails_as_busy_past_the_wait() {
    let spin_then = async |slot_wait: Duration| {
        let server = TestServer::start_with(|c| {
            c.plugin_timeout = DEADLINE;
            c.discover_timeout = DEADLINE * 2;
            c.plugin_instances = 1;
            c.plugin_slot_wait = slot_wait;
        })
        .await;
        let plugin = faulty(&server).await;
        let runtime = server.podium.runtime().clone();
        let spinning = {
            let (runtime, plugin) = (runtime.clone(), plugin.clone());
            tokio::spawn(async move {
                runtime
                    .driver(&plugin, context("spin", None))
                    .discover()
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        // Queued behind the spinning discovery, which holds the only instance for two seconds.
        let queued = runtime.driver(&plugin, context("ok", None)).probe().await;
        let spun = spinning.await.unwrap();
        assert!(matches!(spun, Err(CallError::Deadline { .. })), "{spun:?}");
        queued
    };
    let probed = spin_then(DEADLINE * 10)
        .await
        .expect("the queued call runs");
    assert_eq!(probed.product.as_deref(), Some("faulty"));
    let busy = spin_then(Duration::from_millis(200)).await.unwrap_err();
    assert!(matches!(busy, CallError::Busy { .. }), "{busy:?}");
    assert!(busy.is_transient(), "{busy:?}");
    assert!(
        busy.to_string()
            .contains("every plugin instance of this process stayed busy (waited 0.2s)"),
        "{busy}"
    );
}

#[tokio::test]
async fn a_plugin_that_allocates_without_bound_fails_at_the_memory_limit() {
    let server = server().await;
    let plugin = faulty(&server).await;
    let err = discover_error(&server, &plugin, context("hog", None)).await;
    assert!(
        matches!(err, CallError::MemoryLimit { limit, .. } if limit == MEMORY),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("memory limit of 33554432 bytes"),
        "{err}"
    );
    still_healthy(&server, &plugin).await;
}

#[tokio::test]
async fn a_plugin_that_panics_or_traps_fails_its_call_with_its_message() {
    let server = server().await;
    let plugin = faulty(&server).await;
    let err = discover_error(&server, &plugin, context("trap", None)).await;
    let CallError::Trap { message, .. } = &err else {
        panic!("expected a trap, got {err:?}")
    };
    assert!(message.contains("unreachable"), "{message}");
    assert!(
        message.contains("panicked"),
        "the panic message is kept: {message}"
    );
    still_healthy(&server, &plugin).await;

    let err = discover_error(&server, &plugin, context("abort", None)).await;
    assert!(matches!(err, CallError::Trap { .. }), "{err:?}");
    still_healthy(&server, &plugin).await;
}

#[tokio::test]
async fn a_plugin_reaching_outside_its_endpoint_is_refused_before_anything_is_sent() {
    let server = server().await;
    let plugin = faulty(&server).await;
    let outside = ConnectionCounter::start().await;
    let own = ConnectionCounter::start().await;
    let endpoint = Endpoint {
        base: format!("http://127.0.0.1:{}", own.port).parse().unwrap(),
        credentials: None,
        pod_manager: None,
        parallel_requests: None,
        tls: TlsPolicy::System,
    };
    let targets = [
        format!("http://127.0.0.1:{}/redfish/v1", outside.port),
        format!("http://localhost:{}/redfish/v1", own.port),
        format!("https://127.0.0.1:{}/redfish/v1", own.port),
        format!("http://user:pw@127.0.0.1:{}/redfish/v1", own.port),
        "file:///etc/passwd".to_owned(),
    ];
    for target in &targets {
        let ctx = CallContext {
            config: serde_json::json!({"fault": "escape", "target": target}).to_string(),
            endpoint: Some(endpoint.clone()),
            allocations: None,
        };
        let err = discover_error(&server, &plugin, ctx).await;
        let CallError::Plugin { error, .. } = &err else {
            panic!("{target}: expected the plugin's error, got {err:?}")
        };
        let message = error.to_string();
        assert!(message.contains("denied"), "{target}: {message}");
        assert!(message.contains("outside"), "{target}: {message}");
    }
    // Let any stray connection land before counting.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(outside.count(), 0, "a request left the host");
    assert_eq!(own.count(), 0, "a request left the host");
    still_healthy(&server, &plugin).await;
}

#[tokio::test]
async fn a_plugin_without_an_endpoint_reaches_nothing() {
    let server = server().await;
    let plugin = faulty(&server).await;
    let counter = ConnectionCounter::start().await;
    let ctx = CallContext {
        config: serde_json::json!({"fault": "escape", "target": format!("http://127.0.0.1:{}/", counter.port)})
            .to_string(),
        endpoint: None,
        allocations: None,
    };
    let err = discover_error(&server, &plugin, ctx).await;
    assert!(err.to_string().contains("denied"), "{err}");
    assert_eq!(counter.count(), 0);
}

#[tokio::test]
async fn malformed_results_are_rejected_with_the_reason() {
    let server = server().await;
    let plugin = faulty(&server).await;
    let err = discover_error(&server, &plugin, context("garbage", None)).await;
    let CallError::Malformed { reason, .. } = &err else {
        panic!("expected malformed, got {err:?}")
    };
    assert!(reason.starts_with("systems[0]"), "{reason}");
    let err = server
        .podium
        .runtime()
        .driver(&plugin, context("garbage", None))
        .probe()
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Malformed { .. }), "{err:?}");
    assert!(err.to_string().contains("root link"), "{err}");
    still_healthy(&server, &plugin).await;
}

#[tokio::test]
async fn plugin_errors_keep_their_case_and_words() {
    let server = server().await;
    let plugin = faulty(&server).await;
    let ctx = CallContext {
        config: "not json".into(),
        endpoint: None,
        allocations: None,
    };
    let err = discover_error(&server, &plugin, ctx).await;
    assert!(
        matches!(&err, CallError::Plugin { error: PluginError::InvalidConfig(m), .. } if m.contains("not JSON")),
        "{err:?}"
    );
    assert!(!err.is_transient());
}

#[tokio::test]
async fn a_plugin_that_floods_its_endpoint_fails_at_its_request_budget() {
    let server = TestServer::start_with(|c| {
        c.plugin_timeout = Duration::from_secs(20);
        c.plugin_http_budget = HttpBudget {
            requests: 40,
            bytes: 3 << 20,
        };
    })
    .await;
    let plugin = faulty(&server).await;
    // Small answers: the count of requests is the bound.
    let bmc = ImageServer::start(vec![b'x'; 64]).await;
    let endpoint = |bmc: &ImageServer| Endpoint {
        base: bmc.url("/").parse().unwrap(),
        credentials: None,
        pod_manager: None,
        parallel_requests: None,
        tls: TlsPolicy::System,
    };
    let started = Instant::now();
    let err = server
        .podium
        .runtime()
        .driver(&plugin, context("flood", Some(endpoint(&bmc))))
        .probe()
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::HttpBudget { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("went past its limit of 40 requests"),
        "{message}"
    );
    assert!(message.contains("(41 requests and"), "{message}");
    assert_eq!(bmc.hits(), 40, "requests that reached the BMC");
    assert!(!err.is_transient());
    // Well before the deadline: the budget, not the clock, ended it.
    assert!(started.elapsed() < Duration::from_secs(15));

    // Large answers: the bytes are the bound (1 MiB each, 3 MiB allowed).
    let big = ImageServer::start(vec![b'y'; 1 << 20]).await;
    let err = server
        .podium
        .runtime()
        .driver(&plugin, context("flood", Some(endpoint(&big))))
        .probe()
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::HttpBudget { .. }), "{err:?}");
    assert!(big.hits() <= 4, "{} requests for 3 MiB", big.hits());
    still_healthy(&server, &plugin).await;
}

#[tokio::test]
async fn plugin_text_is_escaped_before_it_is_stored_or_logged() {
    let server = server().await;
    let plugin = faulty(&server).await;
    let err = server
        .podium
        .runtime()
        .driver(&plugin, context("nul-error", None))
        .probe()
        .await
        .unwrap_err();
    let CallError::Plugin {
        error: PluginError::Unreachable(message),
        ..
    } = &err
    else {
        panic!("expected the plugin's unreachable, got {err:?}")
    };
    assert_eq!(
        message,
        "bmc\\u{0}down\\nINFO podium::server: forged\\u{1b}[2J"
    );
}

#[tokio::test]
async fn a_plugin_cannot_flood_the_log_or_forge_a_line_in_it() {
    let (server, _data, _database) =
        process_server(&["--probe-interval", "3600", "--plugin-timeout", "10"]).await;
    let admin = server.admin();
    admin.upload_plugin(guests::FAULTY).await;
    // Creating the pod manager probes it once: one call, ten million log calls.
    admin
        .created(
            "/v1/pod_managers",
            serde_json::json!({"name": "noisy", "url": "http://127.0.0.1:9",
                               "driver": {"name": "faulty", "config": {"fault": "log-flood"}}}),
        )
        .await;
    let log = podium_tests::eventually(Duration::from_secs(30), "the budget notice", || async {
        let log = server.log();
        log.contains("log budget of this call").then_some(log)
    })
    .await;
    let plugin_lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(r#""target":"plugin""#))
        .collect();
    // 1,000 lines and the notice, not millions.
    assert!(
        (1000..=1001).contains(&plugin_lines.len()),
        "{} plugin lines",
        plugin_lines.len()
    );
    // The newline in the plugin's message stayed inside its own line, escaped.
    for line in log.lines().filter(|l| l.contains("forged line")) {
        let event: serde_json::Value = serde_json::from_str(line).expect("a JSON log line");
        assert_eq!(event["target"], "plugin", "{line}");
        assert_eq!(
            event["fields"]["message"], "faulty\\nINFO podium::server: forged line",
            "{line}"
        );
    }
    assert!(
        log.contains("forged line"),
        "the plugin's message is logged"
    );
}

#[tokio::test]
async fn what_the_host_copies_out_of_a_call_is_bounded_by_the_plugin_memory_limit() {
    // 8 MiB of the 32 MiB memory limit may be copied out of an ordinary call.
    let server = server().await;
    let plugin = faulty(&server).await;
    let call = |config: serde_json::Value| {
        let ctx = CallContext {
            config: config.to_string(),
            endpoint: None,
            allocations: None,
        };
        server
            .podium
            .runtime()
            .driver(&plugin, ctx)
            .inspect("/redfish/v1/Systems/1")
    };
    // 12 MiB of MACs, each its own string: more than may be copied.
    let err = call(serde_json::json!({"fault": "bulky", "mib": 12}))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, CallError::Malformed { reason, .. } if reason.contains("more than 8388608 bytes")),
        "{err:?}"
    );
    // 4 MiB is copied, then refused for what it is.
    let err = call(serde_json::json!({"fault": "bulky", "mib": 4}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is not a MAC address"), "{err}");
    // 120 MACs aliasing one 1 MiB buffer: the plugin holds 1 MiB, the host would copy 120.
    let err = call(serde_json::json!({"fault": "alias"}))
        .await
        .unwrap_err();
    assert!(matches!(&err, CallError::Malformed { .. }), "{err:?}");
    still_healthy(&server, &plugin).await;
}

#[tokio::test]
async fn sixteen_inspections_that_alias_their_output_cost_the_server_a_bounded_amount_of_memory() {
    const HOSTS: usize = 16;
    // The default memory limit, 64 MiB: 16 MiB may be copied out of one call.
    let (server, _data, _database) = process_server(&[
        "--operations-per-pod-manager",
        "16",
        "--operation-attempts",
        "1",
    ])
    .await;
    let admin = server.admin();
    admin.upload_plugin(guests::FAULTY).await;
    // The "BMC" answers the registration's power read.
    let bmc = ImageServer::start(br#"{"PowerState": "On"}"#.to_vec()).await;
    let (before, _) = server.usage().unwrap();
    server.reset_peak().unwrap();
    // Its sync finds 16 systems; each is registered, then inspected (all at once), and every
    // inspection answers 120 MACs aliasing one 1 MiB buffer.
    let pm = admin.created("/v1/pod_managers",
            serde_json::json!({"name": "aliasing", "url": bmc.url("/"),
                "driver": {"name": "faulty", "config": {"fault": "alias", "nics": 120, "systems": HOSTS}}})).await;
    let uuid = pm.body["uuid"].as_str().unwrap().to_owned();
    let failed =
        podium_tests::eventually(Duration::from_secs(90), "16 inspections ended", || async {
            let ops = admin
                .get(&format!("/v1/operations?pod_manager={uuid}&limit=100"))
                .await
                .body;
            let failed: Vec<serde_json::Value> = ops["items"]
                .as_array()?
                .iter()
                .filter(|o| o["kind"] == "inspect" && o["status"] == "failed")
                .cloned()
                .collect();
            (failed.len() == HOSTS).then_some(failed)
        })
        .await;
    for op in &failed {
        let error = op["error"].as_str().unwrap();
        assert!(error.contains("more than 16777216 bytes"), "{op}");
    }
    let peak = server.peak_rss().unwrap();
    let grown_mib = peak.saturating_sub(before) / 1024;
    eprintln!(
        "16 aliasing inspections: peak RSS {} MiB over {} MiB before",
        grown_mib,
        before / 1024
    );
    // Each call may make the host copy 16 MiB; unbounded, each would copy 120.
    assert!(
        grown_mib < (HOSTS as u64) * 16 + 64,
        "the peak grew by {grown_mib} MiB over {} MiB",
        before / 1024
    );
    assert_eq!(admin.get("/healthz").await.status, StatusCode::OK);
}
