//! `GET /metrics`, read by the Prometheus project's own OpenMetrics parser: who may scrape it,
//! and that its counters, histograms and gauges move as a real BMC (sushy-tools) is driven.

use std::collections::BTreeMap;

use podium_tests::api_tools::{Sample, parse_openmetrics};
use podium_tests::{Client, TestServer};
use reqwest::StatusCode;
use serde_json::json;

use crate::pod_managers::{bmc, create, eventually, items, minimal, string, wait_succeeded};

/// Scrapes `/metrics` through `client` and parses it; the scrape must be OpenMetrics.
async fn scrape(client: &Client) -> Vec<Sample> {
    let (status, headers, body) = client.get_bytes("/metrics").await;
    let text = String::from_utf8(body).expect("a scrape is UTF-8");
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        headers["content-type"],
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    parse_openmetrics(&text)
        .await
        .unwrap_or_else(|e| panic!("{e:#}\n{text}"))
}

/// The value of the sample `name` whose labels include `labels`; 0 when there is none (a
/// counter no one incremented yet).
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let matching: Vec<&Sample> = samples
        .iter()
        .filter(|s| {
            s.name == name
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .collect();
    assert!(
        matching.len() <= 1,
        "{name} {labels:?} is more than one sample: {matching:?}"
    );
    matching.first().map_or(0.0, |s| s.value)
}

/// The sum of every sample `name` whose labels include `labels`.
fn sum(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| {
            s.name == name
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_openmetrics_for_an_admin_and_move_as_a_bmc_is_driven() {
    let server = TestServer::start_with(|config| {
        config.probe_interval = std::time::Duration::from_millis(300);
        config.sync_interval = std::time::Duration::from_secs(1);
        config.metrics_listen = Some(([127, 0, 0, 1], 0).into());
    })
    .await;
    let admin = server.admin();
    let bmc = bmc(1).await;
    let uuid = string(&create(&admin, minimal("pm-metrics", &bmc)).await, "uuid");
    let host = eventually("the host is available", async || {
        let hosts = items(&admin.get(&format!("/v1/hosts?pod_manager={uuid}")).await);
        match hosts.iter().find(|h| h["kind"] == "system") {
            Some(h) if h["state"] == "available" && h["power_state"] == "off" => Ok(h.clone()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let id = string(&host, "id");

    // Who may scrape: an admin token, not none, not a tenant's.
    let anonymous = server.client(None).get("/metrics").await;
    assert_eq!(
        anonymous.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        anonymous.text
    );
    let tenant = string(
        &admin
            .created("/v1/tenants", json!({"name": "acme"}))
            .await
            .body,
        "id",
    );
    let token = string(
        &admin
            .created(&format!("/v1/tenants/{tenant}/tokens"), json!({}))
            .await
            .body,
        "token",
    );
    let as_tenant = server.client(Some(&token)).get("/metrics").await;
    assert_eq!(
        as_tenant.status,
        StatusCode::FORBIDDEN,
        "{}",
        as_tenant.text
    );

    let before = scrape(&admin).await;
    let reply = admin
        .post(&format!("/v1/hosts/{id}/power"), json!({"action": "on"}))
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text);
    let operation = wait_succeeded(&admin, &string(&reply.body, "id")).await;
    assert_eq!(operation["status"], "succeeded", "{operation}");
    eventually("the host shows power on", async || {
        let h = admin.get(&format!("/v1/hosts/{id}")).await.body;
        if h["power_state"] == "on" {
            Ok(())
        } else {
            Err(h.to_string())
        }
    })
    .await;
    let pool = admin
        .created(
            "/v1/ip_pools",
            json!({"name": "prov", "ranges": [{"start": "10.0.0.10", "end": "10.0.0.19"}], "prefix": 24}),
        )
        .await
        .body;
    admin
        .created(
            &format!("/v1/ip_pools/{}/claims", string(&pool, "id")),
            json!({"owner": "node-1"}),
        )
        .await;
    let after = scrape(&admin).await;

    // Operations: one attempt at a power action, which succeeded, timed.
    let power = [("kind", "power"), ("outcome", "succeeded")];
    assert_eq!(
        value(&after, "podium_operation_attempts_total", &power)
            - value(&before, "podium_operation_attempts_total", &power),
        1.0
    );
    assert!(
        value(
            &after,
            "podium_operation_attempt_duration_seconds_count",
            &[("kind", "power")]
        ) >= 1.0
    );
    // The driver's calls, by export, with their latency.
    let set_power = [
        ("plugin", "redfish"),
        ("export", "set_power"),
        ("outcome", "ok"),
    ];
    assert!(
        value(&after, "podium_plugin_calls_total", &set_power)
            > value(&before, "podium_plugin_calls_total", &set_power),
        "{after:?}"
    );
    assert!(
        value(
            &after,
            "podium_plugin_call_duration_seconds_count",
            &[("plugin", "redfish"), ("export", "set_power")]
        ) >= 1.0
    );
    // What the driver sent the BMC, by pod manager and status.
    let to_bmc = |s: &[Sample]| {
        sum(
            s,
            "podium_endpoint_requests_total",
            &[("pod_manager", &uuid)],
        )
    };
    assert!(to_bmc(&after) > to_bmc(&before), "{after:?}");
    assert!(
        sum(
            &after,
            "podium_endpoint_requests_total",
            &[("pod_manager", &uuid), ("status", "200")]
        ) >= 1.0
    );
    // The API's requests by route template (never the id sent), status and method.
    assert_eq!(
        value(
            &after,
            "podium_http_requests_total",
            &[
                ("method", "POST"),
                ("route", "/v1/hosts/{id}/power"),
                ("status", "202")
            ]
        ),
        1.0
    );
    assert!(
        after
            .iter()
            .all(|s| !s.labels.values().any(|v| v.contains(&id))),
        "a host's id is a route's label"
    );
    // Gauges read from the database: the host, powered on; the pool's addresses.
    assert_eq!(
        value(
            &after,
            "podium_hosts",
            &[
                ("kind", "system"),
                ("state", "available"),
                ("power_state", "on")
            ]
        ),
        1.0
    );
    assert_eq!(
        value(
            &before,
            "podium_hosts",
            &[
                ("kind", "system"),
                ("state", "available"),
                ("power_state", "on")
            ]
        ),
        0.0
    );
    let usage = |kind: &str| {
        value(
            &after,
            "podium_pool_addresses",
            &[("pool", "prov"), ("usage", kind)],
        )
    };
    assert_eq!(
        (usage("allocated"), usage("pre_allocated"), usage("free")),
        (1.0, 0.0, 9.0)
    );
    // Every request above authenticated; most found their token in the cache.
    assert!(
        value(
            &after,
            "podium_token_cache_lookups_total",
            &[("result", "hit")]
        ) > 0.0
    );
    let kinds: BTreeMap<&str, &str> = after
        .iter()
        .map(|s| (s.family.as_str(), s.kind.as_str()))
        .collect();
    assert_eq!(kinds["podium_plugin_calls"], "counter");
    assert_eq!(kinds["podium_plugin_call_duration_seconds"], "histogram");
    assert_eq!(kinds["podium_hosts"], "gauge");

    // The scrapers' listener: the same metrics with no token, and nothing else.
    let scrapers = Client::new(
        server.metrics_url.as_deref().expect("a metrics listener"),
        None,
    );
    let open = scrape(&scrapers).await;
    assert_eq!(
        value(
            &open,
            "podium_hosts",
            &[
                ("kind", "system"),
                ("state", "available"),
                ("power_state", "on")
            ]
        ),
        1.0
    );
    let other = scrapers.get("/v1/hosts").await;
    assert_eq!(other.status, StatusCode::NOT_FOUND, "{}", other.text);
}

#[tokio::test]
async fn an_admin_may_open_metrics_to_scrapers_on_the_api_listener() {
    let server = TestServer::start_with(|config| {
        config.metrics_access = podium_server::MetricsAccess::Public;
    })
    .await;
    let anonymous = server.client(None);
    let samples = scrape(&anonymous).await;
    // The bundled plugins were asked who they are as they loaded.
    assert!(
        value(
            &samples,
            "podium_plugin_calls_total",
            &[("export", "info"), ("outcome", "ok")]
        ) >= 3.0,
        "{samples:?}"
    );
    // Only /metrics: the rest of the API still wants a token.
    let hosts = anonymous.get("/v1/hosts").await;
    assert_eq!(hosts.status, StatusCode::UNAUTHORIZED, "{}", hosts.text);
}
