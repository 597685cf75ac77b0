//! BIOS settings and secure boot through the admin API, against sushy-tools' libvirt driver in
//! front of libvirt's built-in `test:///default` driver (a domain with no VM behind it, whose
//! BIOS sushy-tools keeps in the domain's metadata, and whose loader it rewrites for secure
//! boot), its fake driver where a BMC has no BIOS, and DMTF's blade mockup served by
//! `sushy-static` where a system has no secure boot.

use podium_tests::TestServer;
use podium_tests::sushy::{LibvirtBackend, Sushy, SushyConfig};
use podium_types::Bios;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::pod_managers::wait_succeeded;

/// The domain `test:///default` holds, running: sushy-tools serves it as this system.
pub(crate) const TEST_DOMAIN: &str = "6695eb01-f6a4-8304-79aa-97f2502e193f";

/// sushy-tools' libvirt driver in front of the test domain. Its loader map names firmware for
/// the domain's architecture (i686), which the test driver never opens, so secure boot can be
/// turned on and off.
pub(crate) async fn libvirt_bmc() -> Sushy {
    Sushy::start(libvirt_config())
        .await
        .expect("sushy-tools starts with libvirt's test driver")
}

/// The configuration of [`libvirt_bmc`].
pub(crate) fn libvirt_config() -> SushyConfig {
    let ovmf =
        json!({"x86_64": "/usr/share/OVMF/OVMF_CODE.fd", "i686": "/usr/share/OVMF/OVMF_CODE.fd"});
    SushyConfig {
        libvirt: Some(LibvirtBackend {
            uri: "test:///default".into(),
            domains: vec![TEST_DOMAIN.into()],
            storage_pool: "default-pool".into(),
        }),
        settings: vec![
            (
                "SUSHY_EMULATOR_BOOT_LOADER_MAP",
                json!({"UEFI": ovmf, "Legacy": {"x86_64": null, "i686": null}}),
            ),
            (
                "SUSHY_EMULATOR_SECURE_BOOT_ENABLED_NVRAM",
                json!("/usr/share/OVMF/OVMF_VARS.ms.fd"),
            ),
            (
                "SUSHY_EMULATOR_SECURE_BOOT_DISABLED_NVRAM",
                json!("/usr/share/OVMF/OVMF_VARS.fd"),
            ),
        ],
        ..SushyConfig::default()
    }
}

/// The test domain's resource `under` its system, as the emulator itself shows it.
pub(crate) async fn bmc_view(bmc: &Sushy, under: &str) -> Value {
    let reply = bmc
        .request(
            reqwest::Method::GET,
            &format!("/redfish/v1/Systems/{TEST_DOMAIN}/{under}"),
        )
        .send()
        .await
        .expect("the emulator answers");
    reply.json().await.expect("a JSON resource")
}

/// The BIOS attributes as the emulator itself shows them.
pub(crate) async fn bmc_attributes(bmc: &Sushy) -> Value {
    bmc_view(bmc, "BIOS").await["Attributes"].clone()
}

/// An admin reads a host's BIOS, typed by the BMC's registry; a change the registry does not
/// allow is a 422 naming the attribute and reaches nothing; a change that it allows is an
/// operation whose result says what applied, and the BMC's own view shows it; a reset brings
/// the defaults back.
#[tokio::test]
async fn an_admin_reads_changes_and_resets_a_hosts_bios() {
    let bmc = libvirt_bmc().await;
    let server = TestServer::start().await;
    let admin = server.admin();
    let host = admin.available_host(&bmc.url(), 1).await;
    let path = format!("/v1/hosts/{}/bios", host.id);

    let read = admin.get(&path).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let bios: Bios = read.view();
    // sushy-tools sends every value as a string; the registry types them.
    assert_eq!(
        bios.attributes["ProcTurboMode"],
        Some(json_value("Enabled"))
    );
    assert_eq!(bios.attributes["QuietBoot"], Some(json_value(true)));
    assert_eq!(bios.attributes["NumCores"], Some(json_value(10)));
    assert_eq!(
        bios.attributes["SysPassword"], None,
        "a password is never shown"
    );
    let turbo = &bios.registry["ProcTurboMode"];
    assert_eq!(turbo.allowed_values, ["Enabled", "Disabled"]);
    assert!(bios.registry["NumCores"].read_only);
    assert!(bios.pending.is_empty(), "{bios:?}");

    let before = bmc_attributes(&bmc).await;
    for (body, field, says) in [
        (json!({"Nope": "x"}), "attributes.Nope", "no attribute"),
        (
            json!({"ProcTurboMode": "Sideways"}),
            "attributes.ProcTurboMode",
            "Enabled, Disabled",
        ),
        (json!({"NumCores": 12}), "attributes.NumCores", "read-only"),
        (
            json!({"QuietBoot": null}),
            "attributes.QuietBoot",
            "whole number",
        ),
        (
            json!({"QuietBoot": "yes"}),
            "attributes.QuietBoot",
            "boolean",
        ),
        (
            json!({"SysPassword": "hunter2-secret"}),
            "attributes.SysPassword",
            "password",
        ),
        (
            json!({"L2Cache": "x".repeat(17)}),
            "attributes.L2Cache",
            "characters",
        ),
    ] {
        let refused = admin.patch(&path, json!({ "attributes": body })).await;
        refused.assert_invalid(field, says);
        assert!(!refused.text.contains("hunter2-secret"), "{}", refused.text);
    }
    let empty = admin.patch(&path, json!({ "attributes": {} })).await;
    assert_eq!(
        empty.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        empty.text
    );
    assert_eq!(empty.field(), "attributes", "{}", empty.text);
    let stray = admin
        .patch(
            &path,
            json!({ "attributes": {"QuietBoot": false}, "when": "now" }),
        )
        .await;
    assert_eq!(
        stray.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        stray.text
    );
    assert_eq!(stray.field(), "when", "{}", stray.text);
    assert_eq!(
        bmc_attributes(&bmc).await,
        before,
        "a refused change reaches nothing"
    );

    let change = admin
        .patch(
            &path,
            json!({ "attributes": {
                "ProcTurboMode": "Disabled",
                "QuietBoot": false,
                "L2Cache": "20x256 KB",
            }}),
        )
        .await;
    assert_eq!(change.status, StatusCode::ACCEPTED, "{}", change.text);
    assert_eq!(change.body["kind"], "bios", "{}", change.text);
    let op = wait_succeeded(&admin, change.body["id"].as_str().unwrap()).await;
    let mut applied: Vec<&str> = op["result"]["applied"]
        .as_array()
        .unwrap_or_else(|| panic!("applied in {op}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    applied.sort_unstable();
    assert_eq!(applied, ["L2Cache", "ProcTurboMode", "QuietBoot"], "{op}");
    let seen = bmc_attributes(&bmc).await;
    assert_eq!(seen["ProcTurboMode"], "Disabled", "{seen}");
    assert_eq!(seen["QuietBoot"], "False", "{seen}");
    assert_eq!(seen["L2Cache"], "20x256 KB", "{seen}");
    let bios: Bios = admin.get(&path).await.view();
    assert_eq!(bios.attributes["QuietBoot"], Some(json_value(false)));

    let reset = admin
        .post(&format!("/v1/hosts/{}/bios/reset", host.id), json!({}))
        .await;
    assert_eq!(reset.status, StatusCode::ACCEPTED, "{}", reset.text);
    wait_succeeded(&admin, reset.body["id"].as_str().unwrap()).await;
    let seen = bmc_attributes(&bmc).await;
    assert_eq!(seen["ProcTurboMode"], "Enabled", "{seen}");
    assert_eq!(seen["L2Cache"], "10x256 KB", "{seen}");

    let ops = admin
        .get(&format!("/v1/operations?host={}&kind=bios", host.id))
        .await;
    assert_eq!(ops.status, StatusCode::OK, "{}", ops.text);
    assert_eq!(
        ops.body["items"].as_array().map(Vec::len),
        Some(2),
        "{}",
        ops.text
    );
    let audit = admin.get("/v1/audit").await;
    assert!(
        audit.text.contains(&format!("/v1/hosts/{}/bios", host.id)),
        "{}",
        audit.text
    );
}

/// A BMC without BIOS settings (sushy-tools' fake driver links none): reading, changing and
/// resetting are a 409 naming the capability, and nothing is queued.
#[tokio::test]
async fn a_bmc_without_bios_settings_is_a_conflict_naming_them() {
    let bmc = Sushy::start(SushyConfig::with_systems(1))
        .await
        .expect("sushy-tools starts");
    let server = TestServer::start().await;
    let admin = server.admin();
    let host = admin.available_host(&bmc.url(), 1).await;
    let path = format!("/v1/hosts/{}/bios", host.id);
    for reply in [
        admin.get(&path).await,
        admin
            .patch(&path, json!({ "attributes": {"QuietBoot": false} }))
            .await,
        admin.post(&format!("{path}/reset"), json!({})).await,
    ] {
        assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.text);
        assert_eq!(reply.code(), "bios_unsupported", "{}", reply.text);
        assert!(reply.message().contains("Bios"), "{}", reply.text);
    }
    let ops = admin
        .get(&format!("/v1/operations?host={}&kind=bios", host.id))
        .await;
    assert_eq!(ops.body["items"], json!([]), "{}", ops.text);
}

/// An admin reads a host's secure boot and turns it on and off, each change an operation that
/// reads it back; the BMC's own view (the domain's loader, rewritten) follows; a body that is
/// not `{"enabled": bool}` is a 422 naming the field.
#[tokio::test]
async fn an_admin_turns_secure_boot_on_and_off() {
    let bmc = libvirt_bmc().await;
    let server = TestServer::start().await;
    let admin = server.admin();
    let host = admin.available_host(&bmc.url(), 1).await;
    let path = format!("/v1/hosts/{}/secure_boot", host.id);

    let read = admin.get(&path).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let state: podium_types::SecureBoot = read.view();
    assert!(!state.enabled, "{}", read.text);
    assert_eq!(state.mode.as_deref(), Some("DeployedMode"));

    for (body, field) in [
        (json!({"enabled": "yes"}), "enabled"),
        (json!({}), "enabled"),
        (json!({"enabled": true, "x": 1}), "x"),
    ] {
        let refused = admin.put(&path, body.clone()).await;
        refused.assert_invalid(field, "");
    }
    assert_eq!(
        bmc_view(&bmc, "SecureBoot").await["SecureBootEnable"],
        false
    );

    for enabled in [true, false] {
        let change = admin.put(&path, json!({ "enabled": enabled })).await;
        assert_eq!(change.status, StatusCode::ACCEPTED, "{}", change.text);
        assert_eq!(change.body["kind"], "secure_boot", "{}", change.text);
        let op = wait_succeeded(&admin, change.body["id"].as_str().unwrap()).await;
        assert_eq!(op["result"]["enabled"], enabled, "{op}");
        assert_eq!(op["request"], json!({ "enabled": enabled }), "{op}");
        let seen = bmc_view(&bmc, "SecureBoot").await;
        assert_eq!(seen["SecureBootEnable"], enabled, "{seen}");
        let state: podium_types::SecureBoot = admin.get(&path).await.view();
        assert_eq!(state.enabled, enabled);
    }
}

/// A system without secure boot (DMTF's blades link no `SecureBoot`): reading or changing it is
/// a 409 naming the capability, and nothing is queued.
#[tokio::test]
async fn a_system_without_secure_boot_is_a_conflict_naming_it() {
    let bmc = podium_tests::sushy::SushyStatic::start(&podium_tests::composition::mockup(
        "public-bladed",
    ))
    .await
    .expect("sushy-static starts");
    let server = TestServer::start().await;
    let admin = server.admin();
    let host = admin.available_host(&bmc.url(), 4).await;
    let path = format!("/v1/hosts/{}/secure_boot", host.id);
    for reply in [
        admin.get(&path).await,
        admin.put(&path, json!({"enabled": true})).await,
    ] {
        assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.text);
        assert_eq!(reply.code(), "secure_boot_unsupported", "{}", reply.text);
        assert!(reply.message().contains("SecureBoot"), "{}", reply.text);
    }
    let ops = admin
        .get(&format!("/v1/operations?host={}&kind=secure_boot", host.id))
        .await;
    assert_eq!(ops.body["items"], json!([]), "{}", ops.text);
}

pub(crate) fn json_value(v: impl Into<Value>) -> podium_types::BiosValue {
    serde_json::from_value(v.into()).expect("a BIOS value")
}

/// A pod manager's firmware profile (Metal3's HostFirmwareSettings): its inspection gives each
/// host the profile's BIOS values and secure boot before the host is `available`, as the BMC's
/// own view shows; a profile the BMC cannot take (a read-only attribute) leaves the host in
/// `error`, saying why, and the fixed profile is given at the next inspection. What the profile
/// names is checked when it is set.
#[tokio::test]
async fn a_pod_managers_firmware_profile_is_given_to_each_host_before_it_is_available() {
    let bmc = libvirt_bmc().await;
    let server = TestServer::start().await;
    let admin = server.admin();
    for (profile, field) in [
        (
            json!({"bios": {"SysPassword": "hunter2-secret"}}),
            "firmware_profile.bios.SysPassword",
        ),
        (json!({"bios": {"Bad Name": 1}}), "firmware_profile.bios"),
        (
            json!({"bios": {"L2Cache": "a\u{202e}b"}}),
            "firmware_profile.bios.L2Cache",
        ),
    ] {
        let refused = admin
            .post(
                "/v1/pod_managers",
                json!({"name": "site", "url": bmc.url(), "firmware_profile": profile}),
            )
            .await;
        refused.assert_invalid(field, "");
        assert!(!refused.text.contains("hunter2-secret"), "{}", refused.text);
    }
    let profile =
        json!({"bios": {"ProcTurboMode": "Disabled", "QuietBoot": false}, "secure_boot": true});
    let pm = admin
        .created(
            "/v1/pod_managers",
            json!({"name": "site", "url": bmc.url(), "firmware_profile": profile}),
        )
        .await;
    assert_eq!(pm.body["firmware_profile"], profile, "{}", pm.text);
    let pm = pm.body["uuid"].as_str().unwrap().to_owned();
    let host = admin.systems_in_state(&pm, 1, "available").await[0]
        .id
        .to_string();
    let attributes = bmc_attributes(&bmc).await;
    assert_eq!(attributes["ProcTurboMode"], "Disabled", "{attributes}");
    assert_eq!(attributes["QuietBoot"], "False", "{attributes}");
    assert_eq!(bmc_view(&bmc, "SecureBoot").await["SecureBootEnable"], true);
    let inspections = admin
        .get(&format!("/v1/operations?host={host}&kind=inspect"))
        .await;
    let given = &inspections.body["items"][0]["result"]["firmware_profile"];
    assert_eq!(
        given["bios"]["changed"],
        json!(["ProcTurboMode", "QuietBoot"]),
        "{}",
        inspections.text
    );
    assert_eq!(given["secure_boot"]["changed"], true, "{given}");

    // A read-only attribute: the inspection fails, and the host says why.
    let path = format!("/v1/pod_managers/{pm}");
    let set = admin
        .patch(
            &path,
            json!({"firmware_profile": {"bios": {"NumCores": 12}}}),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text);
    let inspect = admin
        .post(&format!("/v1/hosts/{host}/inspect"), json!({}))
        .await;
    assert_eq!(inspect.status, StatusCode::ACCEPTED, "{}", inspect.text);
    let failed = admin.systems_in_state(&pm, 1, "error").await.remove(0);
    let error = failed.error.expect("the host says why");
    assert!(
        error.message.contains("firmware profile")
            && error.message.contains("NumCores")
            && error.message.contains("read-only"),
        "{}",
        error.message
    );
    assert_eq!(bmc_attributes(&bmc).await["NumCores"], "10");

    // Fixed: the next inspection gives it, and the host is available again.
    let set = admin
        .patch(
            &path,
            json!({"firmware_profile": {"bios": {"ProcTurboMode": "Enabled"}}}),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text);
    admin
        .post(&format!("/v1/hosts/{host}/inspect"), json!({}))
        .await;
    admin.systems_in_state(&pm, 1, "available").await;
    assert_eq!(bmc_attributes(&bmc).await["ProcTurboMode"], "Enabled");
}
