//! The bundled Redfish driver against real BMCs: its conformance tests, each run against
//! sushy-tools' emulator and against the scale simulator (`podium_tests::bmc_sim`), which must
//! answer as sushy-tools does (discovery with the right MACs, power, boot override, media,
//! inspection, TLS, and the errors of a missing system, wrong credentials and a stopped BMC).

use podium_runtime::{
    BootPersistence, BootSettings, BootTarget, CallContext, CallError, ChassisType, Credentials,
    Endpoint, Health, MediaRequest, MediaType, Plugin, PluginError, PowerAction, PowerState,
    TlsPolicy,
};
use podium_tests::bmc_sim::{BmcSim, SimConfig, SimTls};
use podium_tests::composition::mockup;
use podium_tests::sushy::{FakeSystem, Sushy, SushyConfig, SushyStatic};
use podium_tests::{ImageServer, TestServer};
use podium_types::Secret;
use serde_json::Value;

const USER: &str = "admin";
const PASSWORD: &str = "s3cret-bmc-password";

/// Runs each named test (an `async fn(Peer)`) against both peers, as `NAME::sushy_tools` and
/// `NAME::simulator`.
macro_rules! conformance {
    ($($test:ident),* $(,)?) => {$(
        mod $test {
            #[tokio::test]
            async fn sushy_tools() {
                super::$test(super::Peer::SushyTools).await
            }
            #[tokio::test]
            async fn simulator() {
                super::$test(super::Peer::Simulator).await
            }
        }
    )*};
}

conformance!(
    discover_finds_every_system_with_its_macs,
    power_on_reaches_the_bmc_and_reads_back,
    boot_override_is_written_to_the_bmc,
    media_inserted_and_ejected_show_at_the_bmc,
    inspect_reads_a_system_and_a_missing_one_is_not_found,
    wrong_credentials_are_unauthorized_and_never_echo_the_password,
    a_stopped_bmc_is_unreachable_and_transient,
    tls_with_the_bmc_certificate_as_ca_works_and_system_roots_refuse_it,
    the_chassis_tree_holds_every_system_discover_reports,
);

#[derive(Debug, Clone, Copy)]
enum Peer {
    SushyTools,
    Simulator,
}

/// A BMC of either peer, with `USER` / `PASSWORD` as its credentials.
enum Bmc {
    Sushy(Box<Sushy>),
    Sim(BmcSim),
}

impl Bmc {
    async fn start(peer: Peer, systems: u32) -> Bmc {
        Bmc::start_with(peer, systems, false).await
    }

    /// Over HTTPS where `tls`, with a fresh self-signed certificate.
    async fn start_with(peer: Peer, systems: u32, tls: bool) -> Bmc {
        let auth = Some((USER.to_owned(), PASSWORD.to_owned()));
        match peer {
            Peer::SushyTools => {
                let mut config = SushyConfig::with_systems(systems);
                config.basic_auth = auth;
                config.tls = tls;
                Bmc::Sushy(Box::new(
                    Sushy::start(config).await.expect("sushy-tools starts"),
                ))
            }
            Peer::Simulator => {
                let mut config = SimConfig::with_systems(systems as usize);
                config.basic_auth = auth;
                config.tls = tls.then(SimTls::generate);
                Bmc::Sim(BmcSim::start(config).await)
            }
        }
    }

    fn url(&self) -> String {
        match self {
            Bmc::Sushy(bmc) => bmc.url(),
            Bmc::Sim(sim) => sim.url(0),
        }
    }

    fn cert_pem(&self) -> Option<&str> {
        match self {
            Bmc::Sushy(bmc) => bmc.cert_pem(),
            Bmc::Sim(sim) => sim.cert_pem(0),
        }
    }

    /// What the BMC itself reports at `path`.
    async fn get_json(&self, path: &str) -> Value {
        match self {
            Bmc::Sushy(bmc) => bmc.get_json(path).await,
            Bmc::Sim(sim) => sim.get_json(0, path).await,
        }
        .unwrap()
    }

    async fn stop(&mut self) {
        match self {
            Bmc::Sushy(bmc) => bmc.stop().await,
            Bmc::Sim(sim) => sim.stop(0),
        }
    }
}

async fn redfish(server: &TestServer) -> Plugin {
    server.bundled_driver("redfish").await
}

fn endpoint(url: String, cert_pem: Option<&str>, password: &str) -> Endpoint {
    Endpoint {
        base: url.parse().unwrap(),
        credentials: Some(Credentials {
            username: USER.into(),
            password: Secret::new(password),
        }),
        pod_manager: None,
        parallel_requests: None,
        tls: match cert_pem {
            Some(pem) => TlsPolicy::CaBundle(pem.to_owned()),
            None => TlsPolicy::System,
        },
    }
}

fn ctx(bmc: &Bmc) -> CallContext {
    CallContext {
        config: "{}".into(),
        endpoint: Some(endpoint(bmc.url(), bmc.cert_pem(), PASSWORD)),
        allocations: None,
    }
}

async fn discover_finds_every_system_with_its_macs(peer: Peer) {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = Bmc::start(peer, 3).await;
    let systems = server
        .podium
        .runtime()
        .driver(&plugin, ctx(&bmc))
        .discover()
        .await
        .unwrap();
    // Systems only: the BMC's chassis is the component tree's, never a host.
    let machines: Vec<_> = systems
        .iter()
        .filter(|s| s.kind == podium_runtime::SystemKind::System)
        .collect();
    assert_eq!(machines.len(), 3, "{systems:#?}");
    assert_eq!(
        systems.len(),
        3,
        "no chassis among the systems: {systems:#?}"
    );
    for n in 1..=3 {
        let expected = FakeSystem::numbered(n);
        let found = machines
            .iter()
            .find(|s| s.uuid.as_deref() == Some(expected.uuid.as_str()))
            .unwrap_or_else(|| panic!("system {} not discovered", expected.uuid));
        assert_eq!(found.name, expected.name);
        assert_eq!(found.power, PowerState::Off);
        let macs: Vec<_> = found.nics.iter().map(|n| n.mac.as_str()).collect();
        assert_eq!(
            macs,
            expected.nics.iter().map(String::as_str).collect::<Vec<_>>()
        );
        assert!(found.id.contains(&expected.uuid), "{}", found.id);
    }
}

async fn power_on_reaches_the_bmc_and_reads_back(peer: Peer) {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = Bmc::start(peer, 1).await;
    let runtime = server.podium.runtime();
    let system = &runtime.driver(&plugin, ctx(&bmc)).discover().await.unwrap()[0];
    runtime
        .driver(&plugin, ctx(&bmc))
        .set_power(&system.id, PowerAction::On)
        .await
        .unwrap();
    let emulated = bmc.get_json(&system.id).await;
    assert_eq!(emulated["PowerState"], "On", "the emulator's own view");
    let power = runtime
        .driver(&plugin, ctx(&bmc))
        .get_power(&system.id)
        .await
        .unwrap();
    assert_eq!(power, PowerState::On);

    runtime
        .driver(&plugin, ctx(&bmc))
        .set_power(&system.id, PowerAction::ForceOff)
        .await
        .unwrap();
    assert_eq!(bmc.get_json(&system.id).await["PowerState"], "Off");
}

async fn boot_override_is_written_to_the_bmc(peer: Peer) {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = Bmc::start(peer, 1).await;
    let runtime = server.podium.runtime();
    let system = &runtime.driver(&plugin, ctx(&bmc)).discover().await.unwrap()[0];
    runtime
        .driver(&plugin, ctx(&bmc))
        .set_boot_override(
            &system.id,
            BootSettings {
                target: BootTarget::Cd,
                persistence: BootPersistence::Continuous,
                mode: None,
            },
        )
        .await
        .unwrap();
    let emulated = bmc.get_json(&system.id).await;
    assert_eq!(emulated["Boot"]["BootSourceOverrideTarget"], "Cd");
    assert_eq!(emulated["Boot"]["BootSourceOverrideEnabled"], "Continuous");
}

async fn media_inserted_and_ejected_show_at_the_bmc(peer: Peer) {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = Bmc::start(peer, 1).await;
    let runtime = server.podium.runtime();
    let system = &runtime.driver(&plugin, ctx(&bmc)).discover().await.unwrap()[0];
    // sushy-tools downloads what is inserted (the simulator does not).
    let images = ImageServer::start(b"an ISO".to_vec()).await;
    let image = &images.url("/ramdisk.iso");
    runtime
        .driver(&plugin, ctx(&bmc))
        .insert_media(
            &system.id,
            MediaRequest {
                image_url: image.clone(),
                media_type: MediaType::Cd,
                write_protected: true,
            },
        )
        .await
        .unwrap();
    let cd = bmc
        .get_json(&format!("{}/VirtualMedia/Cd", system.id))
        .await;
    assert_eq!(cd["Inserted"], true, "{cd}");
    assert_eq!(cd["Image"], image.as_str(), "{cd}");
    assert_eq!(cd["WriteProtected"], true, "{cd}");
    let inspected = runtime
        .driver(&plugin, ctx(&bmc))
        .inspect(&system.id)
        .await
        .unwrap();
    let slot = inspected
        .media_slots
        .iter()
        .find(|s| s.media_types.contains(&MediaType::Cd))
        .expect("a CD slot");
    assert!(slot.inserted, "{slot:?}");
    assert_eq!(slot.image.as_deref(), Some(image.as_str()));

    runtime
        .driver(&plugin, ctx(&bmc))
        .eject_media(&system.id, MediaType::Cd)
        .await
        .unwrap();
    let cd = bmc
        .get_json(&format!("{}/VirtualMedia/Cd", system.id))
        .await;
    assert_eq!(cd["Inserted"], false, "{cd}");
    assert_eq!(cd["Image"], "", "{cd}");
}

async fn inspect_reads_a_system_and_a_missing_one_is_not_found(peer: Peer) {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = Bmc::start(peer, 2).await;
    let runtime = server.podium.runtime();
    let expected = FakeSystem::numbered(2);
    let id = format!("/redfish/v1/Systems/{}", expected.uuid);
    let system = runtime
        .driver(&plugin, ctx(&bmc))
        .inspect(&id)
        .await
        .unwrap();
    assert_eq!(system.kind, podium_runtime::SystemKind::System);
    assert_eq!(system.name, expected.name);
    assert_eq!(system.uuid.as_deref(), Some(expected.uuid.as_str()));
    assert_eq!(system.manufacturer.as_deref(), Some("Sushy Emulator"));
    assert_eq!(system.power, PowerState::Off);
    let macs: Vec<_> = system.nics.iter().map(|n| n.mac.clone()).collect();
    assert_eq!(macs, expected.nics);
    let mut slots: Vec<_> = system
        .media_slots
        .iter()
        .map(|s| last_segment(&s.id))
        .collect();
    slots.sort();
    assert_eq!(slots, ["Cd", "Floppy"], "{:?}", system.media_slots);
    assert!(system.media_slots.iter().all(|s| !s.inserted));

    let gone = "/redfish/v1/Systems/27946b59-9e44-4fa7-8e91-0000000000ff";
    let err = runtime
        .driver(&plugin, ctx(&bmc))
        .inspect(gone)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            CallError::Plugin {
                error: PluginError::NotFound(_),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!err.is_transient());
}

async fn wrong_credentials_are_unauthorized_and_never_echo_the_password(peer: Peer) {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = Bmc::start(peer, 1).await;
    let wrong = CallContext {
        config: "{}".into(),
        endpoint: Some(endpoint(bmc.url(), bmc.cert_pem(), "not-the-password")),
        allocations: None,
    };
    let err = server
        .podium
        .runtime()
        .driver(&plugin, wrong)
        .probe()
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            CallError::Plugin {
                error: PluginError::Unauthorized(_),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!err.to_string().contains("not-the-password"));
    assert!(!err.is_transient());
}

async fn a_stopped_bmc_is_unreachable_and_transient(peer: Peer) {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let mut bmc = Bmc::start(peer, 1).await;
    let info = server
        .podium
        .runtime()
        .driver(&plugin, ctx(&bmc))
        .probe()
        .await
        .unwrap();
    assert!(info.root_link.contains("/redfish/v1"), "{info:?}");
    bmc.stop().await;
    let err = server
        .podium
        .runtime()
        .driver(&plugin, ctx(&bmc))
        .probe()
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            CallError::Plugin {
                error: PluginError::Unreachable(_),
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.is_transient());
}

async fn tls_with_the_bmc_certificate_as_ca_works_and_system_roots_refuse_it(peer: Peer) {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = Bmc::start_with(peer, 1, true).await;
    let systems = server
        .podium
        .runtime()
        .driver(&plugin, ctx(&bmc))
        .discover()
        .await
        .unwrap();
    assert!(!systems.is_empty());

    let mut untrusted = endpoint(bmc.url(), bmc.cert_pem(), PASSWORD);
    untrusted.tls = TlsPolicy::System;
    let err = server
        .podium
        .runtime()
        .driver(
            &plugin,
            CallContext {
                config: "{}".into(),
                endpoint: Some(untrusted),
                allocations: None,
            },
        )
        .probe()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("TLS"), "{err}");

    let mut insecure = endpoint(bmc.url(), bmc.cert_pem(), PASSWORD);
    insecure.tls = TlsPolicy::Insecure;
    server
        .podium
        .runtime()
        .driver(
            &plugin,
            CallContext {
                config: "{}".into(),
                endpoint: Some(insecure),
                allocations: None,
            },
        )
        .probe()
        .await
        .expect("verification explicitly off");
}

async fn the_chassis_tree_holds_every_system_discover_reports(peer: Peer) {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = Bmc::start(peer, 3).await;
    let runtime = server.podium.runtime();
    let tree = runtime
        .driver(&plugin, ctx(&bmc))
        .discover_chassis()
        .await
        .expect("the chassis tree");
    let collection = bmc.get_json("/redfish/v1/Chassis").await;
    let listed: Vec<&str> = collection["Members"]
        .as_array()
        .expect("the BMC's chassis")
        .iter()
        .map(|m| m["@odata.id"].as_str().expect("a link"))
        .collect();
    assert_eq!(
        tree.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        listed,
        "{tree:#?}"
    );
    let systems = runtime.driver(&plugin, ctx(&bmc)).discover().await.unwrap();
    for system in systems
        .iter()
        .filter(|s| s.kind == podium_runtime::SystemKind::System)
    {
        let holders: Vec<&str> = tree
            .iter()
            .filter(|c| c.systems.contains(&system.id))
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(holders.len(), 1, "{}: {tree:#?}", system.id);
        let holder = bmc.get_json(holders[0]).await;
        let read = tree.iter().find(|c| c.id == holders[0]).expect("held");
        assert_eq!(read.name, holder["Name"].as_str().expect("a name"));
    }
}

/// sushy-tools' `sushy-static` serving DMTF's blade enclosure mockup as it is: the tree the
/// driver reads is the one the mockup's own links draw (each blade in the enclosure, each holding
/// its system), with each chassis' type, place, power and health.
#[tokio::test]
async fn a_blade_enclosures_tree_is_read_as_the_mockup_links_it() {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let folder = mockup("public-bladed");
    let bmc = SushyStatic::start(&folder)
        .await
        .expect("sushy-static starts");
    let context = || CallContext {
        config: "{}".into(),
        endpoint: Some(endpoint(bmc.url(), None, PASSWORD)),
        allocations: None,
    };
    let runtime = server.podium.runtime();
    let tree = runtime
        .driver(&plugin, context())
        .discover_chassis()
        .await
        .expect("the chassis tree");
    let file = |path: &str| -> Value {
        let relative = path.trim_start_matches("/redfish/v1/");
        serde_json::from_str(
            &std::fs::read_to_string(folder.join(relative).join("index.json"))
                .expect("the mockup has it"),
        )
        .expect("the mockup's JSON")
    };
    let ids = |list: &Value| -> Vec<String> {
        list.as_array()
            .into_iter()
            .flatten()
            .map(|l| l["@odata.id"].as_str().expect("a link").to_owned())
            .collect()
    };
    let members = ids(&file("/redfish/v1/Chassis")["Members"]);
    assert_eq!(members.len(), 5);
    assert_eq!(
        tree.iter().map(|c| c.id.clone()).collect::<Vec<_>>(),
        members
    );
    for chassis in &tree {
        let expected = file(&chassis.id);
        assert_eq!(chassis.name, expected["Name"], "{}", chassis.id);
        assert_eq!(
            chassis.contained_by,
            expected["Links"]["ContainedBy"]["@odata.id"]
                .as_str()
                .map(str::to_owned),
            "{}",
            chassis.id
        );
        assert_eq!(
            chassis.systems,
            ids(&expected["Links"]["ComputerSystems"]),
            "{}",
            chassis.id
        );
        // What the parent says it contains, the children say they are in.
        for child in ids(&expected["Links"]["Contains"]) {
            let child = tree.iter().find(|c| c.id == child).expect("a listed child");
            assert_eq!(child.contained_by.as_deref(), Some(chassis.id.as_str()));
        }
        assert_eq!(chassis.power, Some(PowerState::On), "{}", chassis.id);
        assert_eq!(chassis.health, Some(Health::Ok), "{}", chassis.id);
        assert_eq!(chassis.serial.as_deref(), expected["SerialNumber"].as_str());
    }
    let enclosure = &tree[members
        .iter()
        .position(|m| m.ends_with("/MultiBladeEncl"))
        .expect("the enclosure")];
    assert_eq!(enclosure.chassis_type, ChassisType::Enclosure);
    assert_eq!(enclosure.contained_by, None);
    assert_eq!(
        enclosure.location.as_deref(),
        Some("row North, rack WEB43, U12")
    );
    let blades: Vec<_> = tree
        .iter()
        .filter(|c| c.chassis_type == ChassisType::Blade)
        .collect();
    assert_eq!(blades.len(), 4);
    for (n, blade) in blades.iter().enumerate() {
        assert_eq!(blade.contained_by.as_deref(), Some(enclosure.id.as_str()));
        assert_eq!(blade.location, Some(format!("Blade {}", n + 1)));
        assert_eq!(blade.systems.len(), 1);
    }
    // Each system a blade holds is one `discover` reports, by the same id.
    let systems = runtime.driver(&plugin, context()).discover().await.unwrap();
    for blade in &blades {
        assert!(
            systems.iter().any(|s| s.id == blade.systems[0]),
            "{}: {:?}",
            blade.systems[0],
            systems.iter().map(|s| &s.id).collect::<Vec<_>>()
        );
    }
}

/// The last segment of a path: a slot's name.
fn last_segment(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Every property the simulator answers, sushy-tools answers too, with the same value, for every
/// resource the driver reads (the simulator leaves out what the driver does not read): a system
/// powered on, with a boot override and a CD inserted, and every resource around it.
#[tokio::test]
async fn the_simulator_answers_as_sushy_tools_does() {
    let sushy = Bmc::start(Peer::SushyTools, 2).await;
    let sim = Bmc::start(Peer::Simulator, 2).await;
    let images = ImageServer::start(b"an ISO".to_vec()).await;
    let system = format!("/redfish/v1/Systems/{}", FakeSystem::numbered(2).uuid);
    for bmc in [&sushy, &sim] {
        let client = reqwest::Client::new();
        let send = |method: reqwest::Method, path: String, body: Value| {
            client
                .request(method, format!("{}{path}", bmc.url()))
                .basic_auth(USER, Some(PASSWORD))
                .json(&body)
                .send()
        };
        let answers = [
            send(
                reqwest::Method::POST,
                format!("{system}/Actions/ComputerSystem.Reset"),
                serde_json::json!({"ResetType": "On"}),
            )
            .await,
            send(
                reqwest::Method::PATCH,
                system.clone(),
                // `Once` as Podium provisions: sushy-tools answers `Continuous` whatever it is
                // told (its libvirt driver knows no other), and so must the simulator.
                serde_json::json!({"Boot": {"BootSourceOverrideTarget": "Cd",
                                            "BootSourceOverrideEnabled": "Once"}}),
            )
            .await,
            send(
                reqwest::Method::POST,
                format!("{system}/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia"),
                serde_json::json!({"Image": images.url("/boot.iso"), "WriteProtected": true}),
            )
            .await,
        ];
        for answer in answers {
            assert_eq!(answer.unwrap().status(), reqwest::StatusCode::NO_CONTENT);
        }
    }
    let mut paths = vec!["/redfish/v1/".to_owned()];
    let mut seen = std::collections::BTreeSet::new();
    let mut compared = 0;
    let mut differences = Vec::new();
    while let Some(path) = paths.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        let ours = sim.get_json(&path).await;
        let theirs = sushy.get_json(&path).await;
        subset(&ours, &theirs, &path, &mut differences);
        compared += 1;
        // Follow the links both answer, within what the driver reads.
        links(&ours, &mut paths);
    }
    assert!(
        differences.is_empty(),
        "the simulator differs from sushy-tools:\n{}",
        differences.join("\n")
    );
    assert!(compared >= 12, "walked {seen:?}");
}

/// Where `ours` holds something `theirs` does not, or holds it otherwise (a list: element by
/// element; an object: key by key).
fn subset(ours: &Value, theirs: &Value, at: &str, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                match b.get(key) {
                    Some(other) => subset(value, other, &format!("{at}/{key}"), out),
                    None => out.push(format!("{at}/{key}: sushy-tools has none")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                subset(x, y, &format!("{at}/{i}"), out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(format!("{at}: simulator {a}, sushy-tools {b}")),
    }
}

/// Every `@odata.id` under `value` (the resource's own excepted), and action targets not.
fn links(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("@odata.id", Value::String(link)) => out.push(link.clone()),
                    ("Actions", _) => {}
                    _ => links(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| links(v, out)),
        _ => {}
    }
}

/// A pod manager of thousands of systems, discovered in one call under the default limits (a
/// 64 MiB plugin memory): the SDK keeps what the driver parsed of each resource between the
/// steps (`exchange::memo`), not the payloads, so the state grows by a few hundred bytes a
/// system. On the simulator, which answers a system as sushy-tools does.
#[tokio::test]
async fn a_discovery_of_3000_systems_fits_the_default_memory_limit() {
    let server = TestServer::start().await;
    assert_eq!(server.podium.runtime().config().memory_limit, 64 << 20);
    let plugin = redfish(&server).await;
    let bmc = Bmc::start(Peer::Simulator, 3000).await;
    let systems = server
        .podium
        .runtime()
        .driver(&plugin, ctx(&bmc))
        .discover()
        .await
        .unwrap();
    let machines = systems
        .iter()
        .filter(|s| s.kind == podium_runtime::SystemKind::System)
        .count();
    assert_eq!(machines, 3000);
    assert!(
        systems
            .iter()
            .all(|s| s.kind != podium_runtime::SystemKind::System || !s.nics.is_empty())
    );
}
