//! The sans-IO exchanges (`podium:plugin@0.2.0`'s, and 0.3.0's, the same), from the host's
//! side: a driver whose call waits on its BMC holds no instance, a step's requests are sent
//! together and answered in order, and a driver that misbehaves in any step
//! (`tests/guests/faulty-exchange`) fails its own call with an error that says which, the next
//! call succeeding.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use podium_runtime::{
    CallContext, CallError, Contract, Endpoint, HttpBudget, Plugin, PluginError, PowerState,
    Runtime, RuntimeConfig, TlsPolicy,
};
use podium_tests::guests;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// A BMC of a few lines: a path under `/hold` answers when the test releases it (a permit a
/// request), every other path at once; each with 200 and the path as its body. Counts the
/// requests it read.
struct Bmc {
    addr: SocketAddr,
    release: Arc<Semaphore>,
    requests: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Bmc {
    async fn start() -> Bmc {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let release = Arc::new(Semaphore::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let (held, counted) = (release.clone(), requests.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (held, counted) = (held.clone(), counted.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let (held, counted) = (held.clone(), counted.clone());
                        async move {
                            counted.fetch_add(1, Ordering::SeqCst);
                            let path = request.uri().path().to_owned();
                            if path.starts_with("/hold") {
                                held.acquire().await.unwrap().forget();
                            }
                            Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from(path))))
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Bmc {
            addr,
            release,
            requests,
            task,
        }
    }

    /// Waits until the BMC has read `n` requests (a minute at most: the test fails then).
    async fn wait_for(&self, n: usize) {
        tokio::time::timeout(Duration::from_secs(60), async {
            while self.requests.load(Ordering::SeqCst) < n {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("the BMC never read {n} requests"));
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint {
            base: format!("http://{}", self.addr).parse().unwrap(),
            credentials: None,
            tls: TlsPolicy::System,
            pod_manager: None,
            parallel_requests: None,
        }
    }
}

impl Drop for Bmc {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn runtime(instances: u32) -> Runtime {
    Runtime::new(RuntimeConfig {
        max_instances: instances,
        call_timeout: Duration::from_secs(5),
        discover_timeout: Duration::from_secs(5),
        memory_limit: 32 << 20,
        slot_wait: Duration::from_secs(1),
        http_budget: Some(HttpBudget {
            requests: 50,
            bytes: 1 << 20,
        }),
        ..RuntimeConfig::default()
    })
    .unwrap()
}

async fn faulty(runtime: &Runtime) -> Plugin {
    let plugin = runtime
        .load(guests::FAULTY_EXCHANGE.into())
        .await
        .expect("the 0.2.0 guest loads");
    assert_eq!(plugin.contract(), Contract::V0_2_0);
    plugin
}

fn context(config: serde_json::Value, bmc: &Bmc) -> CallContext {
    CallContext {
        config: config.to_string(),
        endpoint: Some(bmc.endpoint()),
        allocations: None,
    }
}

async fn get_power(
    runtime: &Runtime,
    plugin: &Plugin,
    config: serde_json::Value,
    bmc: &Bmc,
) -> Result<PowerState, CallError> {
    runtime
        .driver(plugin, context(config, bmc))
        .get_power("/redfish/v1/Systems/0")
        .await
}

#[tokio::test]
async fn a_call_waiting_on_its_bmc_holds_no_instance() {
    // One instance for the whole process: under 0.1.0 the held call would keep it, and the
    // second would wait for it and fail as busy.
    let runtime = runtime(1);
    let plugin = faulty(&runtime).await;
    let bmc = Bmc::start().await;
    let held = {
        let (runtime, plugin) = (runtime.clone(), plugin.clone());
        let context = context(serde_json::json!({"target": "/hold"}), &bmc);
        tokio::spawn(async move {
            runtime
                .driver(&plugin, context)
                .get_power("/redfish/v1/Systems/0")
                .await
        })
    };
    bmc.wait_for(1).await;
    // The held call's request is at the BMC: other calls run on the one instance meanwhile.
    for _ in 0..3 {
        assert_eq!(
            get_power(&runtime, &plugin, serde_json::json!({}), &bmc)
                .await
                .unwrap(),
            PowerState::On
        );
    }
    assert!(
        !held.is_finished(),
        "the held call ended before its BMC answered"
    );
    bmc.release.add_permits(1);
    assert_eq!(held.await.unwrap().unwrap(), PowerState::On);
}

#[tokio::test]
async fn a_steps_requests_are_sent_together_sixteen_at_a_time_and_answered_in_order() {
    let runtime = runtime(4);
    let plugin = faulty(&runtime).await;
    let bmc = Bmc::start().await;
    let call = {
        let (runtime, plugin) = (runtime.clone(), plugin.clone());
        let context = context(
            serde_json::json!({"fault": "fan", "requests": 40, "target": "/hold"}),
            &bmc,
        );
        tokio::spawn(async move {
            runtime
                .driver(&plugin, context)
                .get_power("/redfish/v1/Systems/0")
                .await
        })
    };
    // Sixteen at once (`parallel_requests`), none of them answered yet: the step's requests went
    // out together, and the seventeenth waits for one of them.
    bmc.wait_for(16).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(bmc.requests.load(Ordering::SeqCst), 16);
    bmc.release.add_permits(40);
    assert_eq!(
        call.await.unwrap().unwrap(),
        PowerState::On,
        "40 answers, each its own request's, in order"
    );
    assert_eq!(bmc.requests.load(Ordering::SeqCst), 40);
}

/// An endpoint that says how many requests a call sends it at once (a pod manager's
/// `limits.requests`) is sent that many, above the runtime's sixteen and below.
#[tokio::test]
async fn an_endpoints_own_bound_on_a_steps_requests_holds() {
    let runtime = runtime(4);
    let plugin = faulty(&runtime).await;
    for bound in [5, 24] {
        let bmc = Bmc::start().await;
        let call = {
            let (runtime, plugin) = (runtime.clone(), plugin.clone());
            let mut context = context(
                serde_json::json!({"fault": "fan", "requests": 40, "target": "/hold"}),
                &bmc,
            );
            if let Some(endpoint) = &mut context.endpoint {
                endpoint.parallel_requests = Some(bound);
            }
            tokio::spawn(async move {
                runtime
                    .driver(&plugin, context)
                    .get_power("/redfish/v1/Systems/0")
                    .await
            })
        };
        bmc.wait_for(bound).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(bmc.requests.load(Ordering::SeqCst), bound);
        bmc.release.add_permits(40);
        assert_eq!(call.await.unwrap().unwrap(), PowerState::On);
        assert_eq!(bmc.requests.load(Ordering::SeqCst), 40);
    }
}

#[tokio::test]
async fn the_process_bounds_its_requests_in_flight_across_calls() {
    // A socket each: `podium serve` sets half its open files limit.
    let runtime = Runtime::new(RuntimeConfig {
        max_requests: 4,
        ..RuntimeConfig::default()
    })
    .unwrap();
    let plugin = faulty(&runtime).await;
    let bmc = Bmc::start().await;
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let (runtime, plugin) = (runtime.clone(), plugin.clone());
            let context = context(
                serde_json::json!({"fault": "fan", "requests": 10, "target": "/hold"}),
                &bmc,
            );
            tokio::spawn(async move {
                runtime
                    .driver(&plugin, context)
                    .get_power("/redfish/v1/Systems/0")
                    .await
            })
        })
        .collect();
    bmc.wait_for(4).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        bmc.requests.load(Ordering::SeqCst),
        4,
        "two calls of ten requests each, four at a time in the process"
    );
    bmc.release.add_permits(20);
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap(), PowerState::On);
    }
    assert_eq!(bmc.requests.load(Ordering::SeqCst), 20);
}

#[tokio::test]
async fn a_0_2_0_driver_discovers_through_the_host() {
    let runtime = runtime(4);
    let plugin = faulty(&runtime).await;
    let bmc = Bmc::start().await;
    let systems = runtime
        .driver(&plugin, context(serde_json::json!({}), &bmc))
        .discover()
        .await
        .unwrap();
    assert_eq!(systems.len(), 1);
    assert_eq!(systems[0].nics[0].mac, "52:54:00:00:00:02");
    // What it can do, from its own export (the host speaks 0.3.0 to it otherwise).
    let can = runtime
        .driver(&plugin, context(serde_json::json!({}), &bmc))
        .capabilities()
        .await
        .unwrap();
    assert!(can.discover && can.power, "{can:?}");
    assert!(!can.boot_override && !can.virtual_media, "{can:?}");
}

/// Runs `fault` and answers its error; then a well-behaved call of the same plugin succeeds.
async fn fails(fault: &str) -> CallError {
    let runtime = runtime(2);
    let plugin = faulty(&runtime).await;
    let bmc = Bmc::start().await;
    let error = get_power(
        &runtime,
        &plugin,
        serde_json::json!({"fault": fault, "target": "http://127.0.0.1:9/"}),
        &bmc,
    )
    .await
    .expect_err("the faulty call must fail");
    let after = get_power(&runtime, &plugin, serde_json::json!({}), &bmc).await;
    assert!(
        matches!(after, Ok(PowerState::On)),
        "a well-behaved call after {fault}: {after:?}"
    );
    error
}

#[tokio::test]
async fn a_step_that_loops_fails_at_the_calls_deadline() {
    let error = fails("spin").await;
    assert!(matches!(error, CallError::Deadline { .. }), "{error:?}");
}

#[tokio::test]
async fn a_step_that_eats_memory_fails_at_the_limit() {
    let error = fails("hog").await;
    assert!(matches!(error, CallError::MemoryLimit { .. }), "{error:?}");
}

#[tokio::test]
async fn a_step_that_traps_fails_with_its_panic_message() {
    let error = fails("trap").await;
    let CallError::Trap { message, .. } = &error else {
        panic!("{error:?}");
    };
    assert!(
        message.contains("trap requested by the config"),
        "{message}"
    );
}

#[tokio::test]
async fn a_step_asking_for_nothing_is_malformed() {
    let error = fails("empty").await;
    assert!(
        matches!(&error, CallError::Malformed { reason, .. } if reason.contains("asked for no request")),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_outcome_of_the_wrong_case_is_malformed() {
    let error = fails("wrong-outcome").await;
    assert!(
        matches!(&error, CallError::Malformed { reason, .. } if reason.contains("finished with done, where power was due")),
        "{error:?}"
    );
}

#[tokio::test]
async fn endless_steps_end_at_the_request_budget_even_when_their_requests_are_refused() {
    // `fails` points the requests outside the endpoint: refused, never spent, and still the
    // steps are counted.
    let error = fails("endless").await;
    let CallError::HttpBudget { spent, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(spent.limit.requests, 50);
    assert_eq!(spent.requests, 51, "the 51st step");
}

#[tokio::test]
async fn endless_steps_end_at_the_calls_deadline_where_the_budget_allows_them() {
    let runtime = Runtime::new(RuntimeConfig {
        call_timeout: Duration::from_secs(1),
        http_budget: None,
        ..RuntimeConfig::default()
    })
    .unwrap();
    let plugin = faulty(&runtime).await;
    let bmc = Bmc::start().await;
    let error = get_power(
        &runtime,
        &plugin,
        serde_json::json!({"fault": "endless"}),
        &bmc,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, CallError::Deadline { .. }),
        "one deadline for all the steps: {error:?}"
    );
    assert!(bmc.requests.load(Ordering::SeqCst) > 1, "several steps ran");
}

#[tokio::test]
async fn a_request_outside_the_endpoint_is_refused_and_never_sent() {
    let elsewhere = Bmc::start().await;
    let runtime = runtime(2);
    let plugin = faulty(&runtime).await;
    let bmc = Bmc::start().await;
    let target = format!("http://{}/", elsewhere.addr);
    let escaped = get_power(
        &runtime,
        &plugin,
        serde_json::json!({"fault": "escape", "target": target}),
        &bmc,
    )
    .await;
    assert!(
        matches!(&escaped, Err(CallError::Plugin { error: PluginError::Internal(m), .. }) if m.contains("denied") && m.contains("outside")),
        "{escaped:?}"
    );
    assert_eq!(
        elsewhere.requests.load(Ordering::SeqCst),
        0,
        "nothing reached it"
    );
    let error = fails("escape").await;
    let CallError::Plugin {
        error: PluginError::Internal(message),
        ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert!(
        message.contains("denied") && message.contains("outside"),
        "{message}"
    );
}

#[tokio::test]
async fn a_state_larger_than_the_host_copies_out_is_malformed() {
    let error = fails("bulky-state").await;
    assert!(
        matches!(&error, CallError::Malformed { reason, .. } if reason.contains("to copy at once")),
        "{error:?}"
    );
}
