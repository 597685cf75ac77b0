//! Claims: a tenant claims a host of a granted pod manager (backed by sushy-tools), sees only
//! its own claims and only the consumer's view of the host, and a release deprovisions the host
//! before another tenant can have it.

use std::time::Duration;

use podium_tests::{BMC_PASSWORD, Site, eventually};
use podium_types::ClaimState;
use podium_types::views::{ClaimView, List, TokenCreatedView};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test]
async fn a_tenant_claims_sees_its_host_and_releases_it_through_deprovisioning() {
    let site = Site::start(1).await;
    let alice = site.tenant("alice").await;
    let bob = site.tenant("bob").await;
    let eve = site.tenant_without_grant("eve").await;

    let claim = alice.created("/v1/claims", site.claim(json!({}))).await;
    let view = claim.view::<ClaimView>();
    assert_eq!(view.state, ClaimState::Bound, "{}", claim.text);
    let id = view.id.to_string();
    let host = &claim.body["host"];
    assert_eq!(
        host["nics"][0]["mac"], "52:54:00:00:00:01",
        "{}",
        claim.text
    );
    for secret in [BMC_PASSWORD, site.bmc.url().as_str(), "/redfish/v1/Systems"] {
        assert!(
            !claim.text.contains(secret),
            "the claim leaks `{secret}`: {}",
            claim.text
        );
    }
    // Online by default: the emulator powers the host on.
    let uuid = host["uuid"].as_str().unwrap().to_owned();
    let system = format!("/redfish/v1/Systems/{uuid}");
    eventually(Duration::from_secs(20), "power on", || async {
        (site.bmc.get_json(&system).await.ok()?["PowerState"] == "On").then_some(())
    })
    .await;

    // Other tenants: the claim does not exist for them; one without a grant cannot even see
    // the pod manager; the last host is taken, so bob waits.
    assert_eq!(
        bob.get(&format!("/v1/claims/{id}")).await.status,
        StatusCode::NOT_FOUND
    );
    assert!(
        bob.get("/v1/claims").await.body["items"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let denied = eve.post("/v1/claims", site.claim(json!({}))).await;
    assert_eq!(denied.status, StatusCode::NOT_FOUND, "{}", denied.text);
    // Bob's claim stays powered off, so the emulator's state after the release is the
    // deprovisioning's.
    let mut bob_body = site.claim(json!({}));
    bob_body["online"] = json!(false);
    let waiting = bob.created("/v1/claims", bob_body).await;
    let view = waiting.view::<ClaimView>();
    assert_eq!(view.state, ClaimState::Pending);
    assert!(
        view.reason.unwrap_or_default().contains("waiting"),
        "{}",
        waiting.text
    );
    let bob_claim = view.id.to_string();

    // Site-owned network config: a claim cannot bring its own.
    let mut with_network = site.claim(json!({}));
    with_network["network_data"] = json!({"links": []});
    let refused = alice.post("/v1/claims", with_network).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
    assert_eq!(refused.code(), "network_config_owned_by_site");
    assert!(refused.message().contains("site owns network config"));

    // Release: power off, media ejected, override cleared, then bob's claim binds.
    let released = alice
        .send(reqwest::Method::DELETE, &format!("/v1/claims/{id}"), None)
        .await;
    assert_eq!(released.status, StatusCode::ACCEPTED, "{}", released.text);
    eventually(Duration::from_secs(20), "the release", || async {
        (alice.get(&format!("/v1/claims/{id}")).await.status == StatusCode::NOT_FOUND).then_some(())
    })
    .await;
    let emulated = site.bmc.get_json(&system).await.unwrap();
    assert_eq!(emulated["PowerState"], "Off", "deprovisioned: {emulated}");
    // The emulator reads a disabled override back as its last persistence; the target is cleared.
    assert_eq!(
        emulated["Boot"]["BootSourceOverrideTarget"], "None",
        "{emulated}"
    );
    let bound = eventually(Duration::from_secs(20), "bob's claim binds", || async {
        let c = bob.get(&format!("/v1/claims/{bob_claim}")).await;
        (c.body["state"] == "bound").then_some(c)
    })
    .await;
    assert_eq!(bound.body["host"]["uuid"], uuid.as_str());
}

#[tokio::test]
async fn racing_claims_never_share_a_host_and_none_is_lost() {
    let site = Site::start(3).await;
    let mut tenants = Vec::new();
    for i in 0..6 {
        tenants.push(site.tenant(&format!("t{i}")).await);
    }
    // 30 claims from 6 tenants at once, for 3 hosts.
    let mut tasks = Vec::new();
    for i in 0..30 {
        let client = tenants[i % 6].clone();
        let body = json!({"pod_manager": site.pm, "image": {"url": "http://images.invalid/os"}, "online": false});
        tasks.push(tokio::spawn(async move {
            (i % 6, client.post("/v1/claims", body).await)
        }));
    }
    let mut bound = Vec::new();
    let mut pending = 0;
    for task in tasks {
        let (owner, reply) = task.await.unwrap();
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
        let claim = reply.view::<ClaimView>();
        match (claim.state, claim.host) {
            (ClaimState::Bound, Some(host)) => {
                bound.push((owner, claim.id.to_string(), host.id.to_string()))
            }
            (ClaimState::Pending, None) => pending += 1,
            (other, _) => panic!("unexpected state {other:?}: {}", reply.text),
        }
    }
    let hosts = |bound: &[(usize, String, String)]| {
        let mut hosts: Vec<String> = bound.iter().map(|b| b.2.clone()).collect();
        hosts.sort();
        hosts.dedup();
        hosts.len()
    };
    assert_eq!(bound.len(), 3, "three hosts, three bound claims");
    assert_eq!(hosts(&bound), 3, "each host bound at most once");
    assert_eq!(pending, 27);
    let admin = site.server.admin();
    let all = admin.get("/v1/claims").await.view::<List<ClaimView>>();
    assert_eq!(all.items.len(), 30, "no claim lost");

    // Released, the hosts go to waiting claims, again each to one.
    for (owner, id, _) in &bound {
        let r = tenants[*owner].delete(&format!("/v1/claims/{id}")).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    }
    let rebound = eventually(Duration::from_secs(30), "waiting claims bind", || async {
        let items = admin
            .get("/v1/claims")
            .await
            .view::<List<ClaimView>>()
            .items;
        let bound: Vec<(usize, String, String)> = items
            .iter()
            .filter(|c| c.state == ClaimState::Bound)
            .filter_map(|c| Some((0, c.id.to_string(), c.host.as_ref()?.id.to_string())))
            .collect();
        (items.len() == 27 && bound.len() == 3).then_some(bound)
    })
    .await;
    assert_eq!(hosts(&rebound), 3, "each host bound at most once");
}

#[tokio::test]
async fn a_claim_nothing_could_match_fails_with_the_reason_and_read_only_tokens_cannot_claim() {
    let site = Site::start(1).await;
    let alice = site.tenant("alice").await;
    let tenant_id = alice.id.clone();
    let mut body = site.claim(json!({}));
    body["min_cpu"] = json!(4096);
    let claim = alice.created("/v1/claims", body).await;
    let view = claim.view::<ClaimView>();
    assert_eq!(view.state, ClaimState::Failed);
    assert!(
        view.reason.unwrap_or_default().contains("no host"),
        "{}",
        claim.text
    );

    let admin = site.server.admin();
    let reader = admin
        .post(
            &format!("/v1/tenants/{tenant_id}/tokens"),
            json!({"read_only": true}),
        )
        .await;
    let reader = site
        .server
        .client(Some(&reader.view::<TokenCreatedView>().token));
    assert_eq!(reader.get("/v1/claims").await.status, StatusCode::OK);
    let refused = reader.post("/v1/claims", site.claim(json!({}))).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text);
    let bad = alice
        .post(
            "/v1/claims",
            json!({"pod_manager": site.pm, "image": {"url": "ftp://x"}}),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad.field(), "image.url");
    // Formats and checksum types are the model's: the names there are, said.
    for (image, field, names) in [
        (
            json!({"url": "http://x/os.img", "format": "vmdk"}),
            "image.format",
            "raw, qcow2, live-iso",
        ),
        (
            json!({"url": "http://x/os.img", "checksum_type": "crc32"}),
            "image.checksum_type",
            "md5, sha256, sha512",
        ),
    ] {
        let bad = alice
            .post(
                "/v1/claims",
                json!({"pod_manager": site.pm, "image": image}),
            )
            .await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
        assert_eq!(bad.field(), field, "{}", bad.text);
        assert!(bad.message().contains(names), "{}", bad.text);
    }
}

#[tokio::test]
async fn a_tenant_holding_claims_cannot_be_deleted() {
    let site = Site::start(1).await;
    let alice = site.tenant("alice").await;
    let tenant_id = alice.id.clone();
    let mut body = site.claim(json!({}));
    body["online"] = json!(false);
    let claim = alice.post("/v1/claims", body).await;
    let view = claim.view::<ClaimView>();
    assert_eq!(view.state, ClaimState::Bound, "{}", claim.text);
    let admin = site.server.admin();
    let refused = admin.delete(&format!("/v1/tenants/{tenant_id}")).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
    assert_eq!(refused.code(), "tenant_has_claims");
    let id = view.id.to_string();
    assert_eq!(
        alice.delete(&format!("/v1/claims/{id}")).await.status,
        StatusCode::ACCEPTED
    );
    eventually(Duration::from_secs(20), "the release", || async {
        (alice.get(&format!("/v1/claims/{id}")).await.status == StatusCode::NOT_FOUND).then_some(())
    })
    .await;
    assert_eq!(
        admin
            .delete(&format!("/v1/tenants/{tenant_id}"))
            .await
            .status,
        StatusCode::NO_CONTENT
    );
}

#[tokio::test]
async fn a_claims_addresses_show_in_its_view_and_go_with_its_release() {
    let site = Site::start(1).await;
    let admin = site.server.admin();
    let alice = site.tenant("alice").await;
    let claim = alice.post("/v1/claims", site.claim(json!({}))).await;
    let view = claim.view::<ClaimView>();
    assert_eq!(view.state, ClaimState::Bound, "{}", claim.text);
    let claim_id = view.id.to_string();
    let host_id = view.host.expect("bound").id.to_string();
    let boot_mac = claim.body["host"]["nics"][0]["mac"]
        .as_str()
        .unwrap()
        .to_lowercase();

    let pool = |name: &str, subnet: &str, plugin: Value| {
        let admin = admin.clone();
        let body = json!({"name": name, "ranges": [{"subnet": subnet}], "prefix": 24,
                          "gateway": subnet.replace(".0/24", ".1"), "dns_servers": ["192.0.2.53"],
                          "pod_manager": site.pm, "plugin": plugin});
        async move {
            let p = admin.created("/v1/ip_pools", body).await;
            p.body["id"].as_str().unwrap().to_owned()
        }
    };
    let service = pool("service", "10.20.0.0/24", json!({"name": "ipam-static"})).await;
    let prov = pool("prov", "10.21.0.0/24", json!({"name": "ipam-dhcpless"})).await;
    let kept = pool(
        "prov-kept",
        "10.22.0.0/24",
        json!({"name": "ipam-dhcpless", "config": {"release": "keep"}}),
    )
    .await;
    let take = |pool: String, owner: String| {
        let admin = admin.clone();
        async move {
            admin
                .post(
                    &format!("/v1/ip_pools/{pool}/claims"),
                    json!({"owner": owner}),
                )
                .await
        }
    };

    let svc = take(service.clone(), format!("claim:{claim_id}")).await;
    assert_eq!(svc.status, StatusCode::CREATED, "{}", svc.text);
    assert!(
        svc.body.get("network_data").is_none(),
        "a static pool writes no networkData"
    );

    // DHCP-less: the host's boot NIC gets a static address and the ramdisk's networkData.
    let pre = take(prov.clone(), format!("host:{host_id}")).await;
    assert_eq!(pre.status, StatusCode::CREATED, "{}", pre.text);
    assert_eq!(pre.body["address"], "10.21.0.2");
    let nd = &pre.body["network_data"];
    assert_eq!(
        nd["links"][0]["ethernet_mac_address"],
        boot_mac.as_str(),
        "{nd}"
    );
    assert_eq!(nd["networks"][0]["ip_address"], "10.21.0.2");
    assert_eq!(nd["networks"][0]["netmask"], "255.255.255.0");
    assert_eq!(nd["networks"][0]["routes"][0]["gateway"], "10.21.0.1");
    assert_eq!(nd["services"][0]["address"], "192.0.2.53");
    // cloud-init, reading it on the host, configures the boot NIC statically.
    let netplan = podium_tests::cloud_init::netplan(nd, &[("eno1", &boot_mac)])
        .await
        .unwrap();
    for expected in [
        "- 10.21.0.2/24",
        "via: 10.21.0.1",
        &format!("macaddress: '{boot_mac}'"),
        "- 192.0.2.53",
    ] {
        assert!(netplan.contains(expected), "no `{expected}` in\n{netplan}");
    }
    // The same for IPv6.
    let prov6 = admin
        .created(
            "/v1/ip_pools",
            json!({"name": "prov6", "ranges": [{"subnet": "2001:db8:21::/64"}], "prefix": 64,
                   "gateway": "2001:db8:21::1", "dns_servers": ["2001:db8::53"],
                   "plugin": {"name": "ipam-dhcpless"}}),
        )
        .await;
    let prov6 = prov6.body["id"].as_str().unwrap().to_owned();
    let pre6 = take(prov6.clone(), format!("host:{host_id}")).await;
    assert_eq!(pre6.body["address"], "2001:db8:21::2", "{}", pre6.text);
    let netplan =
        podium_tests::cloud_init::netplan(&pre6.body["network_data"], &[("eno1", &boot_mac)])
            .await
            .unwrap();
    for expected in [
        "- 2001:db8:21::2/64",
        "via: 2001:db8:21::1",
        "- 2001:db8::53",
    ] {
        assert!(netplan.contains(expected), "no `{expected}` in\n{netplan}");
    }
    // Inspected again: the same address.
    let again = take(prov.clone(), format!("host:{host_id}")).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.body["address"], "10.21.0.2");
    let keep = take(kept.clone(), format!("host:{host_id}")).await;
    assert_eq!(keep.status, StatusCode::CREATED, "{}", keep.text);
    // DHCP-less pools serve hosts only.
    let named = take(prov.clone(), "some-name".into()).await;
    assert_eq!(
        named.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        named.text
    );
    assert_eq!(named.field(), "owner");

    let view = alice
        .get(&format!("/v1/claims/{claim_id}"))
        .await
        .view::<ClaimView>();
    let mut addresses: Vec<&str> = view
        .host
        .as_ref()
        .expect("the claim is bound")
        .addresses
        .iter()
        .map(|a| a.address.as_str())
        .collect();
    addresses.sort();
    assert_eq!(
        addresses,
        ["10.20.0.2", "10.21.0.2", "10.22.0.2", "2001:db8:21::2"],
        "{view:?}"
    );

    // Released: the claim's address and the host's preprovisioning address go; a pool set to
    // keep host addresses keeps its one.
    let released = alice.delete(&format!("/v1/claims/{claim_id}")).await;
    assert_eq!(released.status, StatusCode::ACCEPTED, "{}", released.text);
    eventually(Duration::from_secs(20), "claim released", || async {
        let c = alice.get(&format!("/v1/claims/{claim_id}")).await;
        (c.status == StatusCode::NOT_FOUND).then_some(())
    })
    .await;
    let count = |pool: String| {
        let admin = admin.clone();
        async move {
            admin.get(&format!("/v1/ip_pools/{pool}")).await.body["usage"]["allocated"]
                .as_str()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        }
    };
    assert_eq!(count(service).await, 0);
    assert_eq!(count(prov).await, 0);
    assert_eq!(count(prov6).await, 0);
    assert_eq!(count(kept).await, 1);
}

#[tokio::test]
async fn deleting_a_tenant_with_release_deprovisions_its_hosts_first() {
    let site = Site::start(2).await;
    let admin = site.server.admin();
    let alice = site.tenant("alice").await;
    let tenant_id = alice.id.clone();
    let bob = site.tenant("bob").await;
    let bound = alice.post("/v1/claims", site.claim(json!({}))).await;
    let view = bound.view::<ClaimView>();
    assert_eq!(view.state, ClaimState::Bound, "{}", bound.text);
    let host = view.host.expect("bound");
    let host_id = host.id.to_string();
    let uuid = host.uuid.expect("a uuid");
    // Bob takes the other host, so Alice's second claim waits.
    let bobs = bob.post("/v1/claims", site.claim(json!({}))).await;
    assert_eq!(bobs.body["state"], "bound", "{}", bobs.text);
    let pending = alice.post("/v1/claims", site.claim(json!({}))).await;
    assert_eq!(pending.body["state"], "pending", "{}", pending.text);

    let deleting = admin
        .delete(&format!("/v1/tenants/{tenant_id}?release=true"))
        .await;
    assert_eq!(deleting.status, StatusCode::ACCEPTED, "{}", deleting.text);
    assert_eq!(
        deleting.body["releasing_claims"], 1,
        "the pending claim goes at once"
    );
    // Her credentials stop working at once.
    assert_eq!(
        alice.get("/v1/claims").await.status,
        StatusCode::UNAUTHORIZED
    );
    eventually(Duration::from_secs(20), "the tenant is deleted", || async {
        let t = admin.get(&format!("/v1/tenants/{tenant_id}")).await;
        (t.status == StatusCode::NOT_FOUND).then_some(())
    })
    .await;
    // Her host went through deprovisioning: off, no boot override, free for others.
    let emulated = site
        .bmc
        .get_json(&format!("/redfish/v1/Systems/{uuid}"))
        .await
        .unwrap();
    assert_eq!(emulated["PowerState"], "Off", "{emulated}");
    assert_eq!(
        emulated["Boot"]["BootSourceOverrideTarget"], "None",
        "{emulated}"
    );
    let host = admin.get(&format!("/v1/hosts/{host_id}")).await;
    assert_eq!(host.status, StatusCode::OK);
    let again = bob.post("/v1/claims", site.claim(json!({}))).await;
    assert_eq!(again.body["state"], "bound", "{}", again.text);
    assert_eq!(again.body["host"]["id"], host_id.as_str());
}

/// A tenant's `online: false` powers its host off as a user expects: the BMC is asked for
/// `GracefulShutdown` (the OS shuts down), and `ForceOff` only follows where the site's
/// `power.shutdown_timeout` is 0. What the BMC received is read at a proxy in front of it.
#[tokio::test]
async fn a_claims_power_off_asks_the_os_to_shut_down_first() {
    use podium_tests::sushy::{Sushy, SushyConfig};
    use podium_tests::{FaultProxy, TestServer};

    let server = TestServer::start_with(podium_tests::site::quick).await;
    let admin = server.admin();
    let emulator = Sushy::start(SushyConfig::with_systems(1)).await.unwrap();
    let bmc = FaultProxy::start(&emulator.url()).await;
    let pm = admin
        .created(
            "/v1/pod_managers",
            json!({"name": "site", "url": bmc.url(), "deploy": {"cleaning": "disabled"}}),
        )
        .await;
    assert_eq!(
        pm.body["power"],
        json!({"shutdown_timeout": 120}),
        "{}",
        pm.text
    );
    let pm = pm.body["uuid"].as_str().unwrap().to_owned();
    let refused = admin
        .patch(
            &format!("/v1/pod_managers/{pm}"),
            json!({"power": {"shutdown_timeout": 3601}}),
        )
        .await;
    refused.assert_invalid("power.shutdown_timeout", "0 (force at once) to 3600");
    admin.systems_in_state(&pm, 1, "available").await;
    let (_, token) = admin.granted_tenant("alice", &pm).await;
    let alice = server.client(Some(&token));
    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let claim = alice
        .created(
            "/v1/claims",
            json!({"pod_manager": pm, "image": {"url": images.url("/os.iso")}}),
        )
        .await;
    let id = claim.body["id"].as_str().unwrap().to_owned();
    eventually(Duration::from_secs(60), "the claim provisioned", || async {
        let c = alice.get(&format!("/v1/claims/{id}")).await.body;
        (c["host"]["provisioning_state"] == "provisioned").then_some(())
    })
    .await;

    // The resets the BMC was sent from now on.
    let resets = || -> Vec<Value> {
        bmc.posted
            .lock()
            .unwrap()
            .iter()
            .filter(|(path, _)| path.ends_with("/Actions/ComputerSystem.Reset"))
            .map(|(_, body)| body["ResetType"].clone())
            .collect()
    };
    let before = resets().len();
    let off = alice
        .patch(&format!("/v1/claims/{id}"), json!({"online": false}))
        .await;
    assert_eq!(off.status, StatusCode::OK, "{}", off.text);
    let op = eventually(Duration::from_secs(150), "the power off done", || async {
        let ops = alice.get(&format!("/v1/claims/{id}/operations")).await.body;
        ops["items"]
            .as_array()?
            .iter()
            .find(|o| o["kind"] == "power" && o["request"]["action"] == "off")
            .filter(|o| o["status"] == "succeeded")
            .cloned()
    })
    .await;
    assert_eq!(op["result"]["power_state"], "off", "{op}");
    assert_eq!(op["result"]["sent"], json!(["graceful_shutdown"]), "{op}");
    assert_eq!(resets()[before..], [json!("GracefulShutdown")], "{op}");

    // A site that gives the OS no time forces the power off at once.
    let on = alice
        .patch(&format!("/v1/claims/{id}"), json!({"online": true}))
        .await;
    assert_eq!(on.status, StatusCode::OK, "{}", on.text);
    eventually(Duration::from_secs(60), "the host on again", || async {
        let c = alice.get(&format!("/v1/claims/{id}")).await.body;
        (c["host"]["power_state"] == "on").then_some(())
    })
    .await;
    admin
        .patch(
            &format!("/v1/pod_managers/{pm}"),
            json!({"power": {"shutdown_timeout": 0}}),
        )
        .await;
    let before = resets().len();
    let off = alice
        .patch(&format!("/v1/claims/{id}"), json!({"online": false}))
        .await;
    assert_eq!(off.status, StatusCode::OK, "{}", off.text);
    eventually(Duration::from_secs(60), "the power forced off", || async {
        (resets()[before..] == [json!("ForceOff")]).then_some(())
    })
    .await;
}
