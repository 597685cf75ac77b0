//! The bundled Redfish driver against a real BMC (sushy-tools): discovery with the right MACs,
//! power, boot override, and the errors of wrong credentials and a stopped BMC.

use podium_runtime::{
    BootPersistence, BootSettings, BootTarget, CallContext, CallError, Credentials, Endpoint,
    Plugin, PluginError, PowerAction, PowerState, TlsPolicy,
};
use podium_tests::TestServer;
use podium_tests::sushy::{FakeSystem, Sushy, SushyConfig};
use podium_types::Secret;

const USER: &str = "admin";
const PASSWORD: &str = "s3cret-bmc-password";

async fn redfish(server: &TestServer) -> Plugin {
    let reference = podium_app::plugins::PluginRef {
        name: "redfish".into(),
        ..Default::default()
    };
    server
        .podium
        .plugin_resolve(&reference, podium_runtime::World::HardwareDriver, "driver")
        .await
        .expect("the bundled redfish plugin")
}

fn endpoint(bmc: &Sushy, password: &str) -> Endpoint {
    Endpoint {
        base: bmc.url().parse().unwrap(),
        credentials: Some(Credentials {
            username: USER.into(),
            password: Secret::new(password),
        }),
        pod_manager: None,
        tls: match bmc.cert_pem() {
            Some(pem) => TlsPolicy::CaBundle(pem.to_owned()),
            None => TlsPolicy::System,
        },
    }
}

fn ctx(bmc: &Sushy) -> CallContext {
    CallContext {
        config: "{}".into(),
        endpoint: Some(endpoint(bmc, PASSWORD)),
        allocations: None,
    }
}

async fn bmc(systems: u32) -> Sushy {
    let mut config = SushyConfig::with_systems(systems);
    config.basic_auth = Some((USER.into(), PASSWORD.into()));
    Sushy::start(config).await.expect("sushy-tools starts")
}

#[tokio::test]
async fn discover_finds_every_system_with_its_macs() {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = bmc(3).await;
    let systems = server
        .podium
        .runtime()
        .driver(&plugin, ctx(&bmc))
        .discover()
        .await
        .unwrap();
    let machines: Vec<_> = systems
        .iter()
        .filter(|s| s.kind == podium_runtime::SystemKind::System)
        .collect();
    assert_eq!(machines.len(), 3, "{systems:#?}");
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

#[tokio::test]
async fn power_on_reaches_the_bmc_and_reads_back() {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = bmc(1).await;
    let runtime = server.podium.runtime();
    let system = &runtime.driver(&plugin, ctx(&bmc)).discover().await.unwrap()[0];
    runtime
        .driver(&plugin, ctx(&bmc))
        .set_power(&system.id, PowerAction::On)
        .await
        .unwrap();
    let emulated = bmc.get_json(&system.id).await.unwrap();
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
    assert_eq!(bmc.get_json(&system.id).await.unwrap()["PowerState"], "Off");
}

#[tokio::test]
async fn boot_override_is_written_to_the_bmc() {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = bmc(1).await;
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
    let emulated = bmc.get_json(&system.id).await.unwrap();
    assert_eq!(emulated["Boot"]["BootSourceOverrideTarget"], "Cd");
    assert_eq!(emulated["Boot"]["BootSourceOverrideEnabled"], "Continuous");
}

#[tokio::test]
async fn wrong_credentials_are_unauthorized_and_never_echo_the_password() {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let bmc = bmc(1).await;
    let wrong = CallContext {
        config: "{}".into(),
        endpoint: Some(endpoint(&bmc, "not-the-password")),
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

#[tokio::test]
async fn a_stopped_bmc_is_unreachable_and_transient() {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let mut bmc = bmc(1).await;
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

#[tokio::test]
async fn tls_with_the_bmc_certificate_as_ca_works_and_system_roots_refuse_it() {
    let server = TestServer::start().await;
    let plugin = redfish(&server).await;
    let mut config = SushyConfig::with_systems(1);
    config.basic_auth = Some((USER.into(), PASSWORD.into()));
    config.tls = true;
    let bmc = Sushy::start(config).await.unwrap();
    let systems = server
        .podium
        .runtime()
        .driver(&plugin, ctx(&bmc))
        .discover()
        .await
        .unwrap();
    assert!(!systems.is_empty());

    let mut untrusted = endpoint(&bmc, PASSWORD);
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

    let mut insecure = endpoint(&bmc, PASSWORD);
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
