//! The native harness enforces what the host enforces: the endpoint is the only origin, the
//! host's own headers are refused, bodies and the requests of a call are bounded, the log is
//! budgeted, and a call past its deadline or budget fails.

use std::time::Duration;

use podium_plugin::driver::{CapabilitySet, PowerState, ServiceInfo, System};
use podium_plugin::http::{self, HttpError, Request, Response};
use podium_plugin::log::{self, Level};
use podium_plugin::prelude::*;
use podium_plugin::testing::{Host, Limits};
use serde::Deserialize;

#[global_allocator]
static ALLOCATOR: podium_plugin::testing::CountingAllocator =
    podium_plugin::testing::CountingAllocator;

/// A driver whose `get-power` does what its configuration says.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Probe {
    /// GET this URL...
    #[serde(default)]
    url: Option<String>,
    /// ... this many times.
    #[serde(default)]
    times: u32,
    /// With this header.
    #[serde(default)]
    header: Option<String>,
    #[serde(default)]
    log_lines: u32,
    #[serde(default)]
    sleep_ms: u64,
    /// Allocate this many MiB during the call.
    #[serde(default)]
    hog_mib: usize,
    /// `inspect` answers a system whose name is this many MiB.
    #[serde(default)]
    bulky_mib: usize,
    /// `discover` GETs a URL that changes at every run: what replay cannot answer.
    #[serde(default)]
    nondeterministic: bool,
}

impl Plugin for Probe {
    fn info() -> PluginInfo {
        podium_plugin::info!("probe", "harness test driver")
    }

    fn from_config(config: &str) -> Result<Self> {
        podium_plugin::config::parse(config)
    }
}

impl HardwareDriver for Probe {
    fn capabilities() -> CapabilitySet {
        CapabilitySet::POWER
    }

    async fn probe(&self) -> Result<ServiceInfo> {
        Err(Error::Unsupported("probe".into()))
    }

    async fn discover(&self) -> Result<Vec<System>> {
        if self.nondeterministic {
            static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Request::get(format!("/run/{run}"))
                .send()
                .await
                .map_err(|e| http::from_http_error(http::Method::Get, "/run", e))?;
        }
        Ok(Vec::new())
    }

    async fn inspect(&self, id: &str) -> Result<System> {
        Ok(System {
            id: id.to_owned(),
            kind: podium_plugin::driver::SystemKind::System,
            name: "x".repeat(self.bulky_mib << 20),
            uuid: None,
            manufacturer: None,
            model: None,
            serial: None,
            cpu_count: 1,
            memory_mib: 1,
            nics: Vec::new(),
            power: PowerState::Off,
            boot: None,
            media_slots: Vec::new(),
        })
    }

    async fn get_power(&self, _: &str) -> Result<PowerState> {
        for i in 0..self.log_lines {
            log::info(&format!("line {i}"));
        }
        std::thread::sleep(Duration::from_millis(self.sleep_ms));
        let hog = vec![1u8; self.hog_mib << 20];
        std::hint::black_box(&hog);
        if let Some(url) = &self.url {
            for _ in 0..self.times.max(1) {
                let mut request = Request::get(url.clone());
                if let Some(h) = &self.header {
                    request = request.header(h.clone(), "x");
                }
                match request.send().await {
                    Ok(_) => {}
                    Err(HttpError::Denied(m)) => {
                        return Err(Error::Protocol(format!("denied: {m}")));
                    }
                    Err(HttpError::InvalidRequest(m)) => {
                        return Err(Error::Internal(format!("invalid: {m}")));
                    }
                    Err(HttpError::TooLarge(m)) => {
                        return Err(Error::Protocol(format!("large: {m}")));
                    }
                    Err(e) => return Err(http::from_http_error(http::Method::Get, url, e)),
                }
            }
        }
        Ok(PowerState::On)
    }
}

fn service(body_len: usize) -> Host {
    Host::new().in_process(move |_| {
        Ok(Response {
            status: 200,
            headers: Vec::new(),
            body: vec![b' '; body_len],
        })
    })
}

fn get_power(host: &Host, config: &str) -> Result<PowerState> {
    host.clone()
        .config(config)
        .driver::<Probe>()
        .get_power("/x")
}

#[test]
fn requests_reach_the_endpoint_only() {
    let host = service(2);
    assert_eq!(
        get_power(&host, r#"{"url": "/redfish/v1"}"#),
        Ok(PowerState::On)
    );
    assert_eq!(host.sent()[0].url, "/redfish/v1");
    let Err(Error::Protocol(m)) = get_power(&host, r#"{"url": "http://elsewhere.test/"}"#) else {
        panic!("another origin reached");
    };
    assert!(m.contains("outside"), "{m}");
    assert_eq!(host.sent().len(), 1, "nothing sent outside");
}

#[test]
fn the_hosts_headers_are_refused() {
    for header in ["Authorization", "host", "Cookie", "Content-Length"] {
        let config = format!(r#"{{"url": "/", "header": "{header}"}}"#);
        let Err(Error::Internal(m)) = get_power(&service(2), &config) else {
            panic!("{header} accepted");
        };
        assert!(m.contains("set by the host"), "{m}");
    }
}

#[test]
fn bodies_are_bounded() {
    let host = service(17 << 20);
    let Err(Error::Protocol(m)) = get_power(&host, r#"{"url": "/"}"#) else {
        panic!("a 17 MiB response accepted");
    };
    assert!(m.starts_with("large"), "{m}");
}

#[test]
#[should_panic(expected = "the host would fail this call")]
fn a_call_past_its_request_budget_fails() {
    let _ = get_power(&service(2), r#"{"url": "/", "times": 1001}"#);
}

#[test]
#[should_panic(expected = "past its deadline")]
fn a_call_past_its_deadline_fails() {
    let host = service(2).limits(Limits {
        call_timeout: Duration::from_millis(50),
        ..Limits::default()
    });
    let _ = get_power(&host, r#"{"sleep_ms": 100}"#);
}

#[test]
fn the_log_is_budgeted() {
    let host = service(2);
    get_power(&host, r#"{"log_lines": 1500}"#).unwrap();
    let logs = host.logs();
    assert_eq!(logs.len(), 1001, "1,000 lines and the notice");
    assert_eq!(logs[999], (Level::Info, "line 999".to_owned()));
    assert!(logs[1000].1.contains("log budget"), "{:?}", logs[1000]);
}

#[test]
fn a_bad_configuration_names_the_field() {
    let refused = Host::new()
        .driver::<Probe>()
        .validate_config(r#"{"tiems": 3}"#)
        .unwrap_err();
    assert!(
        matches!(&refused, Error::InvalidConfig(m) if m.starts_with("tiems: unknown field")),
        "{refused:?}"
    );
}

#[test]
#[should_panic(expected = "past its memory limit")]
fn a_call_past_its_memory_limit_fails() {
    let _ = get_power(&service(2), r#"{"hog_mib": 80}"#);
}

#[test]
fn a_call_within_its_memory_limit_passes() {
    assert_eq!(
        get_power(&service(2), r#"{"hog_mib": 32}"#),
        Ok(PowerState::On)
    );
}

#[test]
#[should_panic(expected = "more than the 16777216 the host copies out")]
fn an_answer_larger_than_the_host_copies_out_fails() {
    let _ = Host::new()
        .config(r#"{"bulky_mib": 17}"#)
        .driver::<Probe>()
        .inspect("/x");
}

#[test]
#[should_panic(expected = "the driver is not deterministic: step 1")]
fn a_driver_that_sends_other_requests_when_replayed_fails() {
    let _ = service(2)
        .config(r#"{"nondeterministic": true}"#)
        .driver::<Probe>()
        .discover();
}

#[test]
fn the_second_run_of_a_step_logs_nothing() {
    let host = service(2);
    get_power(&host, r#"{"log_lines": 3, "url": "/"}"#).unwrap();
    let lines: Vec<String> = host.logs().into_iter().map(|(_, line)| line).collect();
    assert_eq!(lines, ["line 0", "line 1", "line 2"], "each line once");
}
