//! A tenant's changes of the firmware of a host it claims, within what the admin lets the site's
//! tenants change (`tenant_firmware` of the pod manager): through the JSON API
//! (`/v1/claims/{id}/bios`, `secure_boot`, `firmware`), and through its Redfish service with
//! OpenStack's `sushy`, against sushy-tools' libvirt driver in front of libvirt's
//! `test:///default` domain (whose BIOS and loader sushy-tools keeps in the domain).

use podium_tests::site::Site;
use podium_tests::sushy::run_peer_script;
use podium_types::Bios;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::bios::{bmc_attributes, bmc_view, json_value, libvirt_config};
use crate::pod_managers::wait_succeeded;

/// Lets the site's tenants change what `allowed` says.
async fn allow(site: &Site, allowed: Value) {
    let pm = format!("/v1/pod_managers/{}", site.pm);
    let set = site
        .admin
        .patch(&pm, json!({ "tenant_firmware": allowed }))
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text);
    assert_eq!(set.body["tenant_firmware"], allowed, "{}", set.text);
}

/// Until the admin allows it, a tenant changes nothing of its host's firmware, though it reads
/// it (every BIOS attribute read-only to it). The admin lets it change one attribute and secure
/// boot: the tenant reads that in its grant and in the registry, changes that attribute (as an
/// operation of its claim, which the BMC's own view then shows) and secure boot, and nothing
/// else; another tenant reaches none of it, and a read-only token changes nothing.
#[tokio::test]
async fn a_tenant_changes_what_the_site_allows_of_its_claimed_hosts_firmware() {
    let site = Site::start_with(libvirt_config(), |_| {}).await;
    let alice = site.tenant("alice").await;
    let bob = site.tenant("bob").await;
    let claim = site.claimed(&alice.token).await.id;
    let bios_path = format!("/v1/claims/{claim}/bios");

    let read = alice.client.get(&bios_path).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let bios: Bios = read.view();
    assert_eq!(
        bios.attributes["ProcTurboMode"],
        Some(json_value("Enabled"))
    );
    assert!(
        bios.registry.values().all(|e| e.read_only),
        "nothing is the tenant's to change yet: {bios:?}"
    );
    let refused = alice
        .client
        .patch(
            &bios_path,
            json!({"attributes": {"ProcTurboMode": "Disabled"}}),
        )
        .await;
    refused.assert_invalid("attributes.ProcTurboMode", "no BIOS attribute");
    for (path, body, says) in [
        (
            format!("/v1/claims/{claim}/secure_boot"),
            json!({"enabled": true}),
            "secure boot",
        ),
        (
            format!("/v1/claims/{claim}/firmware/update"),
            json!({"image_url": "http://127.0.0.1:1/bios.bin", "targets": ["BIOS"]}),
            "update firmware",
        ),
    ] {
        let refused = if path.ends_with("secure_boot") {
            alice.client.put(&path, body).await
        } else {
            alice.client.post(&path, body).await
        };
        assert_eq!(
            refused.status,
            StatusCode::FORBIDDEN,
            "{path}: {}",
            refused.text
        );
        assert!(refused.message().contains(says), "{}", refused.text);
    }

    // What the admin may let tenants change is checked.
    let pm = format!("/v1/pod_managers/{}", site.pm);
    for (allowed, says) in [
        (json!({"bios_attributes": ["SysPassword"]}), "password"),
        (json!({"bios_attributes": ["Proc Turbo"]}), "attribute name"),
    ] {
        let refused = site
            .admin
            .patch(&pm, json!({ "tenant_firmware": allowed }))
            .await;
        refused.assert_invalid("tenant_firmware.bios_attributes", says);
    }
    let refused = site
        .admin
        .patch(&pm, json!({"tenant_firmware": {"bios": []}}))
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.text
    );
    let allowed = json!({"bios_attributes": ["ProcTurboMode"], "secure_boot": true, "firmware_update": false});
    allow(&site, allowed.clone()).await;
    let granted = alice
        .client
        .get(&format!("/v1/me/pod_managers/{}", site.pm))
        .await;
    // A reset sets every attribute: the admin's alone, whatever the site allows.
    let reset = alice
        .client
        .post(&format!("{bios_path}/reset"), json!({}))
        .await;
    assert_eq!(reset.status, StatusCode::FORBIDDEN, "{}", reset.text);
    assert!(reset.message().contains("admin"), "{}", reset.text);
    assert_eq!(granted.body["tenant_firmware"], allowed, "{}", granted.text);

    let bios: Bios = alice.client.get(&bios_path).await.view();
    assert!(!bios.registry["ProcTurboMode"].read_only, "{bios:?}");
    assert!(bios.registry["QuietBoot"].read_only, "{bios:?}");
    let refused = alice
        .client
        .patch(&bios_path, json!({"attributes": {"QuietBoot": false}}))
        .await;
    refused.assert_invalid("attributes.QuietBoot", "ProcTurboMode");
    // Checked against the registry as an admin's change is.
    let refused = alice
        .client
        .patch(
            &bios_path,
            json!({"attributes": {"ProcTurboMode": "Sideways"}}),
        )
        .await;
    refused.assert_invalid("attributes.ProcTurboMode", "Enabled, Disabled");
    assert_eq!(bmc_attributes(&site.bmc).await["ProcTurboMode"], "Enabled");

    // Bob reaches none of alice's claim; alice's read-only token changes nothing.
    for path in [
        bios_path.clone(),
        format!("/v1/claims/{claim}/secure_boot"),
        format!("/v1/claims/{claim}/firmware"),
        format!("/v1/claims/{claim}/hardware"),
    ] {
        let hidden = bob.client.get(&path).await;
        assert_eq!(
            hidden.status,
            StatusCode::NOT_FOUND,
            "{path}: {}",
            hidden.text
        );
        let read = alice.client.get(&path).await;
        assert_eq!(read.status, StatusCode::OK, "{path}: {}", read.text);
        // A firmware component's id is the BMC's path of it, which an update names.
        assert!(
            path.ends_with("/firmware") || !read.text.contains(crate::bios::TEST_DOMAIN),
            "the BMC's system is not named: {path}: {}",
            read.text
        );
    }
    let hidden = bob
        .client
        .patch(
            &bios_path,
            json!({"attributes": {"ProcTurboMode": "Disabled"}}),
        )
        .await;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND, "{}", hidden.text);
    let read_only = site
        .admin
        .created(
            &format!("/v1/tenants/{}/tokens", alice.id),
            json!({"read_only": true}),
        )
        .await
        .body["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let refused = site
        .server
        .client(Some(&read_only))
        .patch(
            &bios_path,
            json!({"attributes": {"ProcTurboMode": "Disabled"}}),
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text);

    let changed = alice
        .client
        .patch(
            &bios_path,
            json!({"attributes": {"ProcTurboMode": "Disabled"}}),
        )
        .await;
    assert_eq!(changed.status, StatusCode::ACCEPTED, "{}", changed.text);
    assert_eq!(changed.body["kind"], "bios", "{}", changed.text);
    let done = wait_succeeded(&site.admin, changed.body["id"].as_str().unwrap()).await;
    assert_eq!(
        done["result"]["applied"],
        json!(["ProcTurboMode"]),
        "{done}"
    );
    assert_eq!(bmc_attributes(&site.bmc).await["ProcTurboMode"], "Disabled");
    let listed = alice
        .client
        .get(&format!("/v1/claims/{claim}/operations"))
        .await;
    assert!(
        listed.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|op| op["id"] == changed.body["id"]),
        "the change is the claim's: {}",
        listed.text
    );

    let secure = alice
        .client
        .put(
            &format!("/v1/claims/{claim}/secure_boot"),
            json!({"enabled": true}),
        )
        .await;
    assert_eq!(secure.status, StatusCode::ACCEPTED, "{}", secure.text);
    wait_succeeded(&site.admin, secure.body["id"].as_str().unwrap()).await;
    assert_eq!(
        bmc_view(&site.bmc, "SecureBoot").await["SecureBootEnable"],
        true
    );
}

/// Through its Redfish service, a tenant's `sushy` reads the attributes it may not change as
/// read-only, changes the one it may (`PATCH Bios/Settings`, 202 and a task) and secure boot
/// (`PATCH SecureBoot`), and is refused the others and a reset of the BIOS; the BMC's own view
/// shows what changed and nothing else.
#[tokio::test]
async fn a_tenants_sushy_changes_what_the_site_allows_through_podium() {
    let site = Site::start_with(libvirt_config(), |_| {}).await;
    let alice = site.tenant("alice").await;
    let podium_tests::site::Claimed { id: claim, host } = site.claimed(&alice.token).await;
    allow(
        &site,
        json!({"bios_attributes": ["ProcTurboMode"], "secure_boot": true, "firmware_update": false}),
    )
    .await;
    let out = run_peer_script(
        "redfish_bios_change.py",
        &[&site.server.url, &alice.token, host.as_str()],
    )
    .await
    .unwrap();
    let seen: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(seen["read_only"]["ProcTurboMode"], false, "{seen}");
    assert_eq!(seen["read_only"]["QuietBoot"], true, "{seen}");
    assert_eq!(seen["reset_offered"], false, "{seen}");
    let refused = seen["refused"].as_str().unwrap();
    assert!(
        refused.contains("400") && refused.contains("QuietBoot"),
        "{seen}"
    );
    // Each change is an operation of alice's claim (sushy does not follow the task).
    let ops = alice
        .client
        .get(&format!("/v1/claims/{claim}/operations"))
        .await;
    let kinds: Vec<(&str, &str)> = ops.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| (op["kind"].as_str().unwrap(), op["id"].as_str().unwrap()))
        .filter(|(kind, _)| matches!(*kind, "bios" | "secure_boot"))
        .collect();
    assert_eq!(kinds.len(), 2, "{}", ops.text);
    for (_, id) in kinds {
        wait_succeeded(&site.admin, id).await;
    }
    let attributes = bmc_attributes(&site.bmc).await;
    assert_eq!(attributes["ProcTurboMode"], "Disabled", "{attributes}");
    assert_ne!(attributes["QuietBoot"], "False", "{attributes}");
    assert_eq!(
        bmc_view(&site.bmc, "SecureBoot").await["SecureBootEnable"],
        true
    );

    // A reset of the BIOS is the admin's; a body the action does not take is refused.
    let system = format!("{}/redfish/v1/Systems/{host}", site.server.url);
    let http = reqwest::Client::new();
    let reset = http
        .post(format!("{system}/Bios/Actions/Bios.ResetBios"))
        .basic_auth("alice", Some(&alice.token))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::FORBIDDEN);
    let reset: Value = reset.json().await.unwrap();
    assert!(
        reset["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("admin")),
        "{reset}"
    );
    for (body, says) in [
        (
            json!({"Attributes": {"ProcTurboMode": 1.5}}),
            "Attributes/ProcTurboMode",
        ),
        (json!({"Attributes": []}), "Attributes"),
        (json!({"Attribute": {}}), "Attribute"),
        (
            json!({"Attributes": {"ProcTurboMode": "Enabled"}, "@Redfish.SettingsApplyTime": {"ApplyTime": "Never"}}),
            "ApplyTime",
        ),
    ] {
        let refused = http
            .patch(format!("{system}/Bios/Settings"))
            .basic_auth("alice", Some(&alice.token))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST, "{body}");
        let text = refused.text().await.unwrap();
        assert!(text.contains(says), "{body}: {text}");
    }
    assert_eq!(bmc_attributes(&site.bmc).await["ProcTurboMode"], "Disabled");
}

/// A tenant's `sushy` updates its claimed host's BIOS through its Redfish service
/// (`UpdateService.SimpleUpdate`, the system as the target, as Ironic's redfish firmware
/// interface sends it): refused (403) until the site lets tenants update firmware, then an
/// operation of its claim that the BMC's own view confirms (sushy-tools raises the BIOS version);
/// another tenant naming the host is told it does not exist.
#[tokio::test]
async fn a_tenants_sushy_updates_its_hosts_bios_where_the_site_allows() {
    let site = Site::start_with(libvirt_config(), |_| {}).await;
    let alice = site.tenant("alice").await;
    let bob = site.tenant("bob").await;
    let podium_tests::site::Claimed { id: claim, host } = site.claimed(&alice.token).await;
    let image = site.images.url("/bios-1.1.0.bin");
    let update = async |token: &str| -> Value {
        let out = run_peer_script(
            "redfish_firmware_update.py",
            &[&site.server.url, token, host.as_str(), &image],
        )
        .await
        .unwrap();
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
    };

    let refused = update(&alice.token).await;
    assert_eq!(refused["status"], 403, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .is_some_and(|e| e.contains("update firmware")),
        "{refused}"
    );
    allow(
        &site,
        json!({"bios_attributes": [], "secure_boot": false, "firmware_update": true}),
    )
    .await;
    let hidden = update(&bob.token).await;
    assert_eq!(hidden["status"], 404, "{hidden}");
    // An image URL the parser would quietly change is refused, naming the property: nothing
    // is queued, so the BMC never receives a line break in a header.
    let simple_update = format!(
        "{}/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate",
        site.server.url
    );
    for (uri, says) in [
        (format!("{image}\r\nX-Injected: 1"), "line break"),
        ("http:///bios-1.1.0.bin".to_owned(), "names no host"),
    ] {
        let refused = reqwest::Client::new()
            .post(&simple_update)
            .basic_auth("alice", Some(&alice.token))
            .json(&json!({"ImageURI": uri}))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST, "{uri:?}");
        let text = refused.text().await.unwrap();
        assert!(
            text.contains("ImageURI") && text.contains(says),
            "{uri:?}: {text}"
        );
    }
    let queued = alice
        .client
        .get(&format!("/v1/claims/{claim}/operations"))
        .await;
    assert!(
        !queued.text.contains("firmware_update"),
        "a refused update queues nothing: {}",
        queued.text
    );

    let started = update(&alice.token).await;
    assert!(started["task_monitor"].is_string(), "{started}");
    let ops = alice
        .client
        .get(&format!("/v1/claims/{claim}/operations"))
        .await;
    let op = ops.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|op| op["kind"] == "firmware_update")
        .unwrap_or_else(|| panic!("{}", ops.text))
        .clone();
    let done = wait_succeeded(&site.admin, op["id"].as_str().unwrap()).await;
    assert_eq!(
        done["result"]["components"][0]["version"], "1.1.0",
        "{done}"
    );
    assert_eq!(bmc_view(&site.bmc, "").await["BiosVersion"], "1.1.0");
}
