//! Provisioning the DHCP-less way against the Redfish emulator: a claim that binds online has
//! its image and its config drive inserted as virtual media (the emulator downloads both, the
//! drive from Podium), a one-time boot from CD and power on; releasing it ejects everything and
//! powers it off before another tenant gets it.

use std::time::Duration;

use podium_tests::sushy::Sushy;
use podium_tests::{Site, eventually, vfat};

use crate::lifecycle::inspect;
use crate::pod_managers::wait_succeeded;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The emulator's virtual media slots of a system, by the media types they take (`CD`,
/// `Floppy`, ...).
async fn emulated_slots(bmc: &Sushy, system: &str) -> Vec<Value> {
    let system = bmc.get_json(system).await.unwrap();
    let collection = system["VirtualMedia"]["@odata.id"]
        .as_str()
        .unwrap_or_else(|| panic!("no VirtualMedia link in {system}"));
    let media = bmc.get_json(collection).await.unwrap();
    let mut slots = Vec::new();
    for member in media["Members"].as_array().expect("Members") {
        slots.push(
            bmc.get_json(member["@odata.id"].as_str().expect("@odata.id"))
                .await
                .unwrap(),
        );
    }
    slots
}

fn slot_taking<'a>(slots: &'a [Value], media_type: &str) -> &'a Value {
    slots
        .iter()
        .find(|s| {
            s["MediaTypes"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t == media_type))
        })
        .unwrap_or_else(|| panic!("no {media_type} slot in {slots:?}"))
}

/// A site of one emulated system, and that system's host id and id at the emulator.
async fn one_system_site() -> (Site, String, String) {
    let site = Site::start(1).await;
    let host = site
        .admin
        .systems_in_state(&site.pm, 1, "available")
        .await
        .remove(0);
    (site, host.id.to_string(), host.system_id)
}

#[tokio::test]
async fn a_claim_is_provisioned_from_virtual_media_with_its_config_drive_and_released_back() {
    let (
        Site {
            server,
            bmc,
            images,
            admin,
            pm,
        },
        host_id,
        system,
    ) = one_system_site().await;
    admin
        .created(
            "/v1/ip_pools",
            json!({"name": "prod-v4", "ranges": [{"subnet": "10.30.0.0/24"}], "prefix": 24,
                   "gateway": "10.30.0.1", "dns_servers": ["10.30.0.53"], "pod_manager": pm}),
        )
        .await;
    let template = admin
        .put(
            &format!("/v1/pod_managers/{pm}/network_template"),
            json!({"links": [{"id": "boot", "type": "phy", "nic": "boot"}],
                   "networks": [{"id": "prod", "type": "ipv4", "link": "boot", "pool": "prod-v4",
                                 "default_route": true}],
                   "dns": {"from_pools": true}}),
        )
        .await;
    assert_eq!(template.status, StatusCode::OK, "{}", template.text);

    let alice = server.client(Some(&admin.granted_tenant("alice", &pm).await.1));
    let image_url = images.url("/ubuntu.iso");
    let claim = alice
        .created(
            "/v1/claims",
            json!({"pod_manager": pm, "image": {"url": image_url, "format": "live-iso"}}),
        )
        .await;
    let id = claim.body["id"].as_str().unwrap().to_owned();
    let provisioned = eventually(Duration::from_secs(30), "provisioned", || async {
        let c = alice.get(&format!("/v1/claims/{id}")).await.body;
        (c["host"]["provisioning_state"] == "provisioned").then_some(c)
    })
    .await;
    assert_eq!(
        provisioned["host"]["addresses"][0]["address"], "10.30.0.2",
        "{provisioned}"
    );
    // What the claim and the host show is what the BMC reports once provisioned, not the last
    // sync's (an hour away here).
    assert_eq!(provisioned["host"]["power_state"], "on", "{provisioned}");
    let shown = admin.get(&format!("/v1/hosts/{host_id}")).await.body;
    assert_eq!(shown["power_state"], "on", "{shown}");
    let shown_cd = shown["media_slots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["inserted"] == true && m["image"] == image_url.as_str());
    assert!(shown_cd.is_some(), "the CD with the image shows: {shown}");
    // The tenant sees its claim's part of the history.
    let ops = alice.get(&format!("/v1/claims/{id}/operations")).await;
    let kinds: Vec<(&str, &str)> = ops.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["kind"].as_str().unwrap(), o["status"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("provision", "succeeded")], "{}", ops.text);

    // The emulator: the image in the CD, the config drive (downloaded from Podium) in the
    // floppy, a one-time boot from CD, power on.
    let slots = emulated_slots(&bmc, &system).await;
    let cd = slot_taking(&slots, "CD");
    assert_eq!(cd["Inserted"], true, "{cd}");
    assert_eq!(cd["Image"], image_url.as_str(), "{cd}");
    let floppy = slot_taking(&slots, "Floppy");
    assert_eq!(floppy["Inserted"], true, "{floppy}");
    let drive_url = floppy["Image"].as_str().unwrap().to_owned();
    assert!(drive_url.contains("/v1/config_drives/"), "{floppy}");
    let sys = bmc.get_json(&system).await.unwrap();
    assert_eq!(sys["PowerState"], "On", "{sys}");
    // (The emulator reports every override as `Continuous`: it ignores `Once`.)
    assert_eq!(sys["Boot"]["BootSourceOverrideTarget"], "Cd", "{sys}");
    // The drive the BMC holds carries the claim's address.
    let anonymous = server.client(None);
    let drive_path = &drive_url[drive_url.find("/v1/").unwrap()..];
    let files = vfat::drive_files(&anonymous, &drive_url).await;
    let nd: Value = serde_json::from_slice(&files["openstack/latest/network_data.json"]).unwrap();
    assert_eq!(nd["networks"][0]["ip_address"], "10.30.0.2", "{nd}");

    // Released: everything ejected, powered off, available again, the drive gone.
    let released = alice.delete(&format!("/v1/claims/{id}")).await;
    assert_eq!(released.status, StatusCode::ACCEPTED, "{}", released.text);
    eventually(Duration::from_secs(30), "deprovisioned", || async {
        let h = admin.get(&format!("/v1/hosts/{host_id}")).await.body;
        (h["state"] == "available").then_some(())
    })
    .await;
    let slots = emulated_slots(&bmc, &system).await;
    for slot in &slots {
        assert_eq!(slot["Inserted"], false, "{slot}");
    }
    assert_eq!(bmc.get_json(&system).await.unwrap()["PowerState"], "Off");
    let shown = admin.get(&format!("/v1/hosts/{host_id}")).await.body;
    assert_eq!(shown["power_state"], "off", "{shown}");
    assert!(
        shown["media_slots"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["inserted"] == false),
        "{shown}"
    );
    assert_eq!(
        anonymous.get_bytes(drive_path).await.0,
        StatusCode::NOT_FOUND
    );
    // Another tenant gets the host.
    let bob = server.client(Some(&admin.granted_tenant("bob", &pm).await.1));
    let again = bob
        .post(
            "/v1/claims",
            json!({"pod_manager": pm, "image": {"url": image_url}, "online": false}),
        )
        .await;
    assert_eq!(again.body["state"], "bound", "{}", again.text);
    assert_eq!(again.body["host"]["id"], host_id.as_str());
}

#[tokio::test]
async fn a_site_with_a_preprovisioning_image_boots_it_with_the_dhcpless_drive_when_inspecting() {
    let (
        Site {
            server,
            bmc,
            images,
            admin,
            pm,
        },
        host_id,
        system,
    ) = one_system_site().await;
    let ramdisk = images.url("/ramdisk.iso");

    // Validated, named.
    for (bad, reason) in [
        ("ftp://images/ramdisk.iso", "http or https"),
        ("not-a-url", "not a URL"),
        ("http://images/ramdisk .iso", "a space"),
    ] {
        let refused = admin
            .patch(
                &format!("/v1/pod_managers/{pm}"),
                json!({ "preprovisioning_image": bad }),
            )
            .await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            refused.text
        );
        assert_eq!(refused.field(), "preprovisioning_image", "{}", refused.text);
        assert!(refused.message().contains(reason), "{}", refused.text);
    }
    let set = admin
        .patch(
            &format!("/v1/pod_managers/{pm}"),
            json!({ "preprovisioning_image": ramdisk }),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text);
    assert_eq!(set.body["preprovisioning_image"], ramdisk.as_str());

    // Without a DHCP-less pool there is nothing to boot it with: the host stays off.
    let inspect = async || wait_succeeded(&admin, &inspect(&admin, &host_id).await).await;
    let plain = inspect().await;
    assert!(plain["result"]["preprovisioning"].is_null(), "{plain}");
    assert_eq!(bmc.get_json(&system).await.unwrap()["PowerState"], "Off");

    admin
        .created(
            "/v1/ip_pools",
            json!({"name": "prov", "ranges": [{"start": "10.81.0.10", "end": "10.81.0.20"}],
                   "prefix": 24, "gateway": "10.81.0.1", "pod_manager": pm,
                   "plugin": {"name": "ipam-dhcpless"}}),
        )
        .await;
    let booted = inspect().await;
    let prepared = &booted["result"]["preprovisioning"];
    assert_eq!(prepared["booted"], ramdisk.as_str(), "{booted}");
    // The emulator: the ramdisk in the CD, the preprovisioning drive in the floppy, a boot
    // from CD, power on; the inspection read that back.
    let slots = emulated_slots(&bmc, &system).await;
    let cd = slot_taking(&slots, "CD");
    assert_eq!(cd["Image"], ramdisk.as_str(), "{cd}");
    let floppy = slot_taking(&slots, "Floppy");
    let drive_url = floppy["Image"].as_str().unwrap_or_default().to_owned();
    assert!(drive_url.contains("/v1/config_drives/"), "{floppy}");
    let sys = bmc.get_json(&system).await.unwrap();
    assert_eq!(sys["PowerState"], "On", "{sys}");
    assert_eq!(sys["Boot"]["BootSourceOverrideTarget"], "Cd", "{sys}");
    assert_eq!(
        booted["result"]["inventory"]["power_state"], "on",
        "{booted}"
    );
    let files = vfat::drive_files(&server.client(None), &drive_url).await;
    let nd: Value = serde_json::from_slice(&files["openstack/latest/network_data.json"]).unwrap();
    assert_eq!(
        nd["networks"][0]["ip_address"], prepared["addresses"][0]["address"],
        "{nd}"
    );

    // Removed: an inspection prepares the drive and boots nothing.
    let unset = admin
        .patch(
            &format!("/v1/pod_managers/{pm}"),
            json!({ "preprovisioning_image": null }),
        )
        .await;
    assert!(
        unset.body["preprovisioning_image"].is_null(),
        "{}",
        unset.text
    );
    let again = inspect().await;
    assert!(
        again["result"]["preprovisioning"]["booted"].is_null()
            && again["result"]["preprovisioning"]["config_drive"].is_object(),
        "{again}"
    );
}
