//! `faulty-exchange`: a `podium:plugin@0.2.0` hardware driver that misbehaves on purpose in the
//! step after its first request is answered, for the exchange's fault-containment tests. The
//! behaviour comes from the config import, `{"fault": "...", "target": "...", "requests": N}`:
//!
//! - `"ok"` (default): `discover` GETs `/` and answers one system if it got a 200;
//!   `get-power` GETs `/power` (or `"target"`, a path) and answers `on` if it got a 200.
//! - `"fan"`: `get-power` asks for `"requests"` GETs of `/fan/0`, `/fan/1`... (under `"target"`
//!   when given: `/hold/fan/0`...) in one step and answers `on` if every one got a 200 and they
//!   came back in order (each body is its path).
//! - `"spin"`, `"hog"`, `"trap"`: loop, allocate without bound, or panic when resumed.
//! - `"spin-power"`: as `"ok"`, but `set-power` loops when resumed: a site whose hosts register
//!   and whose power actions spin (the hostile neighbour of `benches/hostile_site.rs`).
//!
//! `"ok"` and `"spin-power"` probe, discover `"systems"` systems (1 unless given),
//! `/redfish/v1/Systems/0` and on, inspect them, and power them (a GET of `/` each).
//! - `"empty"`: the first step asks for no request.
//! - `"wrong-outcome"`: `get-power` finishes with `done`.
//! - `"endless"`: every step asks for one more GET of `/` (of `"target"` when given).
//! - `"escape"`: GETs the absolute URL in `"target"`; answers the host's refusal as `internal`.
//! - `"bulky-state"`: the first step's state is 12 MiB (more than a quarter of the tests' 32 MiB
//!   memory limit, what the host copies out of one step).
//!
//! The state is the step number, one byte: the driver keeps nothing else between steps.

wit_bindgen::generate!({
    path: "../../../wit/podium-plugin@0.2.0",
    world: "hardware-driver",
});

use std::hint::black_box;

use exports::podium::plugin::driver::{Call, Guest as DriverGuest, Outcome, Pending, Step};
use exports::podium::plugin::plugin::Guest as PluginGuest;
use podium::plugin::hardware::{CapabilitySet, Nic, PowerState, ServiceInfo, System, SystemKind};
use podium::plugin::http::{HttpError, Method, Request, Response};
use podium::plugin::types::{Error, PluginInfo};

const MIB: usize = 1 << 20;

struct Component;

/// The call's configuration.
struct Config {
    fault: String,
    target: Option<String>,
    requests: usize,
    systems: usize,
}

impl Config {
    fn current() -> Result<Config, Error> {
        let value: serde_json::Value = serde_json::from_str(&podium::plugin::config::get())
            .map_err(|e| Error::InvalidConfig(format!("not JSON: {e}")))?;
        let text = |name: &str| value.get(name).and_then(|v| v.as_str()).map(str::to_owned);
        Ok(Config {
            fault: text("fault").unwrap_or_else(|| "ok".into()),
            target: text("target"),
            requests: value
                .get("requests")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(1) as usize,
            systems: value
                .get("systems")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(1) as usize,
        })
    }
}

fn get(url: impl Into<String>) -> Request {
    Request {
        method: Method::Get,
        url: url.into(),
        headers: Vec::new(),
        body: Vec::new(),
    }
}

fn send(requests: Vec<Request>, step: u8) -> Step {
    Step::Send(Pending {
        requests,
        state: vec![step],
    })
}

fn finished(result: Result<Outcome, Error>) -> Step {
    Step::Finished(result)
}

fn system(i: usize) -> System {
    System {
        id: format!("/redfish/v1/Systems/{i}"),
        kind: SystemKind::System,
        name: format!("faulty-exchange-{i}"),
        uuid: None,
        manufacturer: None,
        model: None,
        serial: None,
        cpu_count: 1,
        memory_mib: 1024,
        nics: vec![Nic {
            id: "nic0".into(),
            name: None,
            mac: format!("52:54:00:{:02x}:{:02x}:02", i >> 8 & 0xff, i & 0xff),
            speed_mbps: None,
        }],
        power: PowerState::Off,
        boot: None,
        media_slots: Vec::new(),
    }
}

fn spin() -> ! {
    let mut counter = 0u64;
    loop {
        counter = black_box(counter.wrapping_add(1));
    }
}

fn fan_path(config: &Config, i: usize) -> String {
    format!("{}/fan/{i}", config.target.as_deref().unwrap_or(""))
}

fn ok(answer: &Result<Response, HttpError>) -> bool {
    matches!(answer, Ok(r) if r.status == 200)
}

fn first_step(config: &Config, call: &Call) -> Step {
    match config.fault.as_str() {
        "empty" => send(Vec::new(), 1),
        "bulky-state" => Step::Send(Pending {
            requests: vec![get("/")],
            state: vec![0xa5; 12 * MIB],
        }),
        "escape" => send(vec![get(config.target.clone().unwrap_or_default())], 1),
        "fan" => send(
            (0..config.requests)
                .map(|i| get(fan_path(config, i)))
                .collect(),
            1,
        ),
        _ => match call {
            Call::GetPower(_) => send(
                vec![get(config
                    .target
                    .clone()
                    .unwrap_or_else(|| "/power".into()))],
                1,
            ),
            _ => send(vec![get("/")], 1),
        },
    }
}

fn next_step(
    config: &Config,
    call: &Call,
    step: u8,
    answers: &[Result<Response, HttpError>],
) -> Step {
    match config.fault.as_str() {
        "spin" => spin(),
        "spin-power" if matches!(call, Call::SetPower(_)) => spin(),
        "hog" => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                let mut block = vec![0u8; MIB];
                for byte in block.iter_mut().step_by(4096) {
                    *byte = 0xa5;
                }
                hoard.push(block);
                black_box(&mut hoard);
            }
        }
        "trap" => panic!("faulty-exchange: trap requested by the config"),
        "endless" => send(
            vec![get(config.target.clone().unwrap_or_else(|| "/".into()))],
            step.wrapping_add(1),
        ),
        "wrong-outcome" => finished(Ok(Outcome::Done)),
        "escape" => finished(match &answers[0] {
            Err(HttpError::Denied(m)) => Err(Error::Internal(format!("denied: {m}"))),
            other => Err(Error::Internal(format!("not refused: {other:?}"))),
        }),
        "fan" => {
            let in_order = answers.iter().enumerate().all(|(i, answer)| {
                matches!(answer, Ok(r) if r.status == 200 && r.body == fan_path(config, i).as_bytes())
            });
            finished(if answers.len() == config.requests && in_order {
                Ok(Outcome::Power(PowerState::On))
            } else {
                Err(Error::Protocol(format!(
                    "{} answers, in order: {in_order}",
                    answers.len()
                )))
            })
        }
        _ => finished(match (call, answers.first()) {
            (_, Some(answer)) if !ok(answer) => Err(Error::Unreachable(format!(
                "the endpoint answered {answer:?}"
            ))),
            (Call::Probe, _) => Ok(Outcome::ServiceInfo(ServiceInfo {
                root_link: "/".into(),
                product: None,
                version: None,
            })),
            (Call::Discover, _) => Ok(Outcome::Systems((0..config.systems).map(system).collect())),
            (Call::Inspect(id), _) => match id
                .strip_prefix("/redfish/v1/Systems/")
                .and_then(|i| i.parse::<usize>().ok())
                .filter(|i| *i < config.systems)
            {
                Some(i) => Ok(Outcome::System(system(i))),
                None => Err(Error::NotFound(format!("no system {id}"))),
            },
            (Call::GetPower(_), _) => Ok(Outcome::Power(PowerState::On)),
            (Call::SetPower(_), _) => Ok(Outcome::Done),
            _ => Err(Error::Unsupported(
                "faulty-exchange: only probe, discover, inspect and power".into(),
            )),
        }),
    }
}

impl PluginGuest for Component {
    fn info() -> PluginInfo {
        PluginInfo {
            name: "faulty-exchange".into(),
            version: "0.2.0".into(),
            description: "misbehaves in the steps of its calls, for tests".into(),
        }
    }

    fn validate_config(config: String) -> Result<(), Error> {
        serde_json::from_str::<serde_json::Value>(&config)
            .map(drop)
            .map_err(|e| Error::InvalidConfig(format!("not JSON: {e}")))
    }
}

impl DriverGuest for Component {
    fn capabilities() -> CapabilitySet {
        CapabilitySet::DISCOVER | CapabilitySet::POWER
    }

    fn start(call: Call) -> Step {
        match Config::current() {
            Ok(config) => first_step(&config, &call),
            Err(e) => finished(Err(e)),
        }
    }

    fn resume(call: Call, state: Vec<u8>, answers: Vec<Result<Response, HttpError>>) -> Step {
        match Config::current() {
            Ok(config) => next_step(
                &config,
                &call,
                state.first().copied().unwrap_or(0),
                &answers,
            ),
            Err(e) => finished(Err(e)),
        }
    }
}

/// `export!` expands to the exports' C-ABI shims (`export_name`, raw pointers), which are `unsafe`;
/// the workspace denies `unsafe_code`, so the lint is allowed for that expansion alone. Native
/// builds (unit tests, clippy) leave it out.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod export_glue {
    use super::Component;
    super::export!(Component with_types_in super);
}
