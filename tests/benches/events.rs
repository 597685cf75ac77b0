//! The cost of pushing one change to 1,000 Redfish event subscribers: one host's power action
//! through Podium, and the time from the end of its operation until every subscriber's
//! receiver (one local HTTP server, a path per subscription) has the change. The delivery task
//! runs every second, so up to a second of it is the wait for the task's next run; the rest is
//! the fan-out (64 destinations at once).
//!
//! `cargo bench -p podium-tests --bench events [-- SUBSCRIBERS RUNS]`; defaults 1000 and 5.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use podium_tests::sushy::{Sushy, SushyConfig};
use podium_tests::{ADMIN_TOKEN, EventReceiver, TestServer, bench_args, site};
use serde_json::json;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() {
    let [subscribers, runs] = bench_args([1000, 5]);
    let bmc = Sushy::start(SushyConfig::with_systems(1))
        .await
        .expect("sushy-tools starts");
    let server = TestServer::start_with(|c| {
        site::quick(c);
        c.event_destinations_local = true;
    })
    .await;
    let admin = server.admin();
    let host = admin.available_host(&bmc.url(), 1).await;
    let receiver = EventReceiver::start().await;
    let http = reqwest::Client::new();
    for i in 0..subscribers {
        let answer = http
            .post(format!(
                "{}/redfish/v1/EventService/Subscriptions",
                server.url
            ))
            .basic_auth("admin", Some(ADMIN_TOKEN))
            .json(&json!({"Destination": receiver.url(&format!("/s{i}"))}))
            .send()
            .await
            .expect("Podium answers");
        assert_eq!(answer.status(), reqwest::StatusCode::CREATED);
    }
    let origin = format!("/redfish/v1/Systems/{}", host.id);
    let mut fan_out = Vec::new();
    let mut spread = Vec::new();
    for run in 0..runs {
        let action = if run % 2 == 0 { "on" } else { "off" };
        let op = admin
            .post(
                &format!("/v1/hosts/{}/power", host.id),
                json!({ "action": action }),
            )
            .await;
        let op_path = format!("/v1/operations/{}", op.body["id"].as_str().unwrap());
        while admin.get(&op_path).await.body["status"] != "succeeded" {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let ended = Instant::now();
        let wanted = format!("powered {action}");
        let mut first = None;
        loop {
            let reached: HashSet<String> = receiver
                .received()
                .into_iter()
                .filter(|r| {
                    r.body["Events"].as_array().is_some_and(|events| {
                        events.iter().any(|e| {
                            e["OriginOfCondition"]["@odata.id"] == origin.as_str()
                                && e["Message"].as_str().is_some_and(|m| m.contains(&wanted))
                                && e["EventId"].as_str().is_some()
                        })
                    })
                })
                .map(|r| r.path)
                .collect();
            if !reached.is_empty() && first.is_none() {
                first = Some(ended.elapsed());
            }
            // The receiver is cleared after each run: what it holds is this run's.
            if reached.len() >= subscribers {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let all = ended.elapsed();
        fan_out.push(all);
        spread.push(all - first.unwrap_or(all));
        receiver.clear();
    }
    fan_out.sort();
    spread.sort();
    let report = json!({
        "subscribers": subscribers,
        "runs": runs,
        "to_every_subscriber_ms_median": ms(fan_out[fan_out.len() / 2]),
        "first_to_last_subscriber_ms_median": ms(spread[spread.len() / 2]),
        "deliveries_per_second": subscribers as f64 / spread[spread.len() / 2].as_secs_f64().max(0.001),
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
