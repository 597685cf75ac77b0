//! Disk images (`raw`, `qcow2`) as the API takes them (`docs/deploy.md`), against the Redfish
//! emulator: what a claim must say of its image, the pod manager's deploy settings (cleaning,
//! md5) and a host's default root device, and a provisioning that fails for good, which fails
//! its claim and frees the host rather than leave it bound half-done. The agent writing an image
//! for real (IPA from PyPI, in a VM) is `tests/boot/`.

use std::time::Duration;

use podium_tests::{Site, eventually};
use reqwest::StatusCode;
use serde_json::{Value, json};

const SHA256: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

#[tokio::test]
async fn a_disk_image_is_checked_against_the_pod_managers_deploy_settings() {
    let site = Site::start(1).await;
    let admin = site.server.admin();
    let alice = site.tenant("alice").await;
    let pm = &site.pm;
    let disk = |extra: Value| {
        let mut image = json!({"url": site.images.url("/disk.qcow2"), "format": "qcow2"});
        image
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"pod_manager": pm, "image": image, "online": false})
    };

    // As the site set them (cleaning off: it has no ramdisk), md5 refused by default; the view
    // says what a release erases, and why.
    let view = admin.get(&format!("/v1/pod_managers/{pm}")).await;
    assert_eq!(
        view.body["deploy"],
        json!({"cleaning": "disabled", "allow_md5": false}),
        "{}",
        view.text
    );
    assert_eq!(
        view.body["cleaning"]["erases"],
        Value::Null,
        "{}",
        view.text
    );
    assert!(
        view.body["cleaning"]["why"]
            .as_str()
            .is_some_and(|w| w.contains("data stays on the disks")),
        "{}",
        view.text
    );
    // The tenant sees it too, before it claims anything.
    let granted = alice.get(&format!("/v1/me/pod_managers/{pm}")).await;
    assert_eq!(
        granted.body["cleaning"], view.body["cleaning"],
        "{}",
        granted.text
    );
    // Unset, cleaning is `metadata`.
    let unset = admin
        .patch(&format!("/v1/pod_managers/{pm}"), json!({"deploy": {}}))
        .await;
    assert_eq!(
        unset.body["deploy"],
        json!({"cleaning": "metadata", "allow_md5": false}),
        "{}",
        unset.text
    );
    for (image, field, words) in [
        (json!({}), "image.checksum_type", "sha256"),
        (
            json!({"checksum": "0".repeat(32), "checksum_type": "md5"}),
            "image.checksum_type",
            "md5 is refused",
        ),
        (
            json!({"checksum": "0".repeat(63), "checksum_type": "sha256"}),
            "image.checksum",
            "64 hexadecimal digits",
        ),
        (
            json!({"checksum": SHA256, "checksum_type": "sha256", "root_device": {"size": 0}}),
            "image.root_device.size",
            "at least 1",
        ),
        (
            json!({"checksum": SHA256, "checksum_type": "sha256", "root_device": {"serial": ""}}),
            "image.root_device.serial",
            "1 to 255 characters",
        ),
        // A hint the agent does not know: named, with the ones it does, in words (no line and
        // column of the body, no parser's quoting).
        (
            json!({"checksum": SHA256, "checksum_type": "sha256", "root_device": {"label": "x"}}),
            "image.root_device.label",
            "unknown field: the fields here are size, ",
        ),
    ] {
        let refused = alice.post("/v1/claims", disk(image)).await;
        refused.assert_invalid(field, words);
        assert!(
            !refused.message().contains(" at line ") && !refused.message().contains(" column "),
            "{}",
            refused.text
        );
    }
    let live = alice
        .post(
            "/v1/claims",
            site.claim(json!({"image": {"url": site.images.url("/os.iso"),
                                        "root_device": {"serial": "x"}}})),
        )
        .await;
    assert_eq!(
        live.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        live.text
    );
    assert_eq!(live.field(), "image.root_device", "{}", live.text);

    // The admin's settings: validated, replaced as a whole, then md5 is taken.
    let bad = admin
        .patch(
            &format!("/v1/pod_managers/{pm}"),
            json!({"deploy": {"cleaning": "shred"}}),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    assert!(bad.field().starts_with("deploy"), "{}", bad.text);
    assert!(bad.text.contains("metadata, full"), "{}", bad.text);
    let set = admin
        .patch(
            &format!("/v1/pod_managers/{pm}"),
            json!({"deploy": {"cleaning": "full", "allow_md5": true}}),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text);
    assert_eq!(
        set.body["deploy"],
        json!({"cleaning": "full", "allow_md5": true})
    );
    let md5 = alice
        .created(
            "/v1/claims",
            disk(json!({"checksum": "d41d8cd98f00b204e9800998ecf8427e", "checksum_type": "md5"})),
        )
        .await;
    assert_eq!(md5.body["state"], "bound", "{}", md5.text);
    assert_eq!(md5.body["image"]["checksum_type"], "md5", "{}", md5.text);

    // A host's default root device: validated, shown, removed.
    let host_id = md5.body["host"]["id"].as_str().unwrap().to_owned();
    let bad = admin
        .patch(
            &format!("/v1/hosts/{host_id}"),
            json!({"root_device": {"wwn": "a\u{7}b"}}),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    assert_eq!(bad.field(), "root_device.wwn", "{}", bad.text);
    let set = admin
        .patch(
            &format!("/v1/hosts/{host_id}"),
            json!({"root_device": {"serial": "DISK-1", "rotational": false}}),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text);
    assert_eq!(
        set.body["root_device"],
        json!({"serial": "DISK-1", "rotational": false})
    );
    let unset = admin
        .patch(
            &format!("/v1/hosts/{host_id}"),
            json!({"root_device": null}),
        )
        .await;
    assert_eq!(unset.body["root_device"], Value::Null, "{}", unset.text);
}

#[tokio::test]
async fn a_provisioning_that_fails_for_good_fails_its_claim_and_frees_the_host() {
    let site = Site::start(1).await;
    let admin = site.server.admin();
    let alice = site.tenant("alice").await;
    // A disk image on a site with no deploy ramdisk: nothing can write it.
    let claim = alice
        .created(
            "/v1/claims",
            json!({"pod_manager": site.pm,
                   "image": {"url": site.images.url("/disk.qcow2"), "format": "qcow2",
                             "checksum": SHA256, "checksum_type": "sha256"}}),
        )
        .await;
    let claim_id = claim.body["id"].as_str().unwrap().to_owned();
    let host_id = claim.body["host"]["id"].as_str().unwrap().to_owned();
    let failed = eventually(Duration::from_secs(60), "the claim fails", || async {
        let c = alice.get(&format!("/v1/claims/{claim_id}")).await;
        (c.body["state"] == "failed" && c.body["host"].is_null()).then_some(c)
    })
    .await;
    let reason = failed.body["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("provisioning failed:") && reason.contains("no deploy ramdisk"),
        "the claim says why: {}",
        failed.text
    );

    // The host is free again, deprovisioned; nothing was written, so nothing was cleaned.
    let host = eventually(Duration::from_secs(60), "the host is free", || async {
        let h = admin.get(&format!("/v1/hosts/{host_id}")).await;
        (h.body["state"] == "available").then_some(h)
    })
    .await;
    assert_eq!(host.body["error"], Value::Null, "{}", host.text);
    let ops = admin
        .get(&format!("/v1/operations?host={host_id}"))
        .await
        .body["items"]
        .clone();
    let kinds: Vec<(&str, &str)> = ops
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["kind"].as_str().unwrap(), o["status"].as_str().unwrap()))
        .take(2)
        .collect();
    assert_eq!(
        kinds,
        [("deprovision", "succeeded"), ("provision", "failed")],
        "{ops}"
    );
    assert!(
        ops[1]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("no deploy ramdisk"),
        "{ops}"
    );
    assert!(ops[0]["result"].get("cleaned").is_none(), "{ops}");

    // Another claim may take the host at once; the failed one stays until its tenant deletes it.
    let next = alice
        .created("/v1/claims", site.claim(json!({"online": false})))
        .await;
    assert_eq!(next.body["state"], "bound", "{}", next.text);
    assert_eq!(next.body["host"]["id"], host_id.as_str(), "{}", next.text);
    let gone = alice.delete(&format!("/v1/claims/{claim_id}")).await;
    assert!(gone.status.is_success(), "{}", gone.text);
    eventually(
        Duration::from_secs(20),
        "the failed claim is gone",
        || async {
            (alice.get(&format!("/v1/claims/{claim_id}")).await.status == StatusCode::NOT_FOUND)
                .then_some(())
        },
    )
    .await;
}

#[tokio::test]
async fn a_host_whose_disks_hold_another_claims_image_is_cleaned_before_it_is_provisioned() {
    use sqlx::Connection;
    let site = Site::start(1).await;
    let admin = site.server.admin();
    let alice = site.tenant("alice").await;
    let host = admin
        .systems_in_state(&site.pm, 1, "available")
        .await
        .remove(0);
    // The admin asks for cleaning on a site with no ramdisk to clean with: the site says it
    // cannot, before anything is claimed.
    let pm = admin
        .patch(
            &format!("/v1/pod_managers/{}", site.pm),
            json!({"deploy": {"cleaning": "metadata"}}),
        )
        .await;
    assert_eq!(pm.body["cleaning"]["erases"], Value::Null, "{}", pm.text);
    let why = pm.body["cleaning"]["why"].as_str().unwrap_or_default();
    assert!(
        why.contains("no deploy ramdisk") && why.contains("`error`"),
        "{}",
        pm.text
    );
    // Its hosts say so too, one by one and in the list.
    let shown = admin.get(&format!("/v1/hosts/{}", host.id)).await;
    assert_eq!(
        shown.body["disks"]["cleaning"], pm.body["cleaning"],
        "{}",
        shown.text
    );
    let listed = admin
        .get(&format!("/v1/hosts?pod_manager={}", site.pm))
        .await;
    assert_eq!(
        listed.body["items"][0]["disks"]["cleaning"], pm.body["cleaning"],
        "{}",
        listed.text
    );
    // What a release while the host was missing leaves: its disks marked as holding another
    // claim's image, never cleaned (there was no machine to reach).
    sqlx::any::install_default_drivers();
    let mut db = sqlx::AnyConnection::connect(&site.server.database_url())
        .await
        .unwrap();
    sqlx::query("UPDATE hosts SET disks_written_for = $1 WHERE id = $2")
        .bind("01a24100-0000-7000-8000-000000000001")
        .bind(host.id.to_string())
        .execute(&mut db)
        .await
        .unwrap();
    db.close().await.unwrap();

    // A live ISO claim: its system would see the disks, so they are cleaned first. This site
    // has no deploy ramdisk to clean them with: the provisioning fails saying so, the claim's
    // release fails the same way, and the host is held in `error`, never back in the pool
    // with another tenant's data on it.
    let before = admin.get(&format!("/v1/hosts/{}", host.id)).await;
    assert_eq!(
        before.body["disks"],
        json!({"may_hold_data_of": "01a24100-0000-7000-8000-000000000001", "last_cleaning": null,
               "cleaning": pm.body["cleaning"]}),
        "the admin sees the mark: {}",
        before.text
    );
    let claim = alice.created("/v1/claims", site.claim(json!({}))).await;
    let claim_id = claim.body["id"].as_str().unwrap().to_owned();
    let held = eventually(
        Duration::from_secs(60),
        "the host held in error",
        || async {
            let h = admin.get(&format!("/v1/hosts/{}", host.id)).await;
            (h.body["state"] == "error" && h.body["error"]["type"] == "deprovisioning").then_some(h)
        },
    )
    .await;
    // The host shows what may be on its disks, and the cleaning that failed.
    let disks = &held.body["disks"];
    assert_eq!(
        disks["may_hold_data_of"], "01a24100-0000-7000-8000-000000000001",
        "{disks}"
    );
    let last = &disks["last_cleaning"];
    assert_eq!(last["succeeded"], false, "{disks}");
    assert_eq!(last["cleaning"], "metadata", "{disks}");
    assert_eq!(
        last["claim"], "01a24100-0000-7000-8000-000000000001",
        "{disks}"
    );
    assert!(
        last["message"]
            .as_str()
            .unwrap_or_default()
            .contains("no deploy ramdisk"),
        "{disks}"
    );
    let ops = admin
        .get(&format!("/v1/operations?host={}&kind=provision", host.id))
        .await;
    let provision = &ops.body["items"][0];
    assert_eq!(provision["status"], "failed", "{provision}");
    assert!(
        provision["error"]
            .as_str()
            .unwrap_or_default()
            .contains("no deploy ramdisk"),
        "the provisioning cleaned first: {provision}"
    );
    let claim = alice.get(&format!("/v1/claims/{claim_id}")).await;
    assert!(
        claim.body["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("no deploy ramdisk"),
        "{}",
        claim.text
    );
    let other = alice.post("/v1/claims", site.claim(json!({}))).await;
    assert_eq!(other.body["state"], "pending", "{}", other.text);
}
