//! metaData and networkData: the pod manager's template rendered by `render-openstack` and read
//! back by cloud-init (then netplan's generator), the three ownership policies, and config drives
//! read back by blkid, mtools and cloud-init's ConfigDrive reader.

use std::time::Duration;

use base64::Engine as _;
use podium_tests::sushy::{FakeSystem, SushyConfig};
use podium_tests::{Client, Site, cloud_init, eventually, vfat};
use podium_types::views::ClaimView;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::Digest;

/// Three NICs per host: two for the bond, one to boot from.
fn system(n: u32) -> FakeSystem {
    let mut s = FakeSystem::numbered(n);
    s.nics = (1..=3)
        .map(|i| format!("52:54:00:{n:02x}:00:{i:02x}"))
        .collect();
    s
}

fn mac(host: u32, nic: u32) -> String {
    format!("52:54:00:{host:02x}:00:{nic:02x}")
}

/// A site of hosts with three NICs each, booting from the third, and two pools.
async fn site(systems: u32) -> Site {
    let site = Site::start_with(
        SushyConfig {
            systems: (1..=systems).map(system).collect(),
            ..SushyConfig::default()
        },
        |_| {},
    )
    .await;
    let admin = &site.admin;
    let path = format!("/v1/hosts?pod_manager={}&state=available", site.pm);
    // Every host boots from its third NIC.
    let hosts = admin.get(&path).await.body["items"].clone();
    for host in hosts
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["kind"] == "system")
    {
        let n = u32::from_str_radix(&host["nics"][0]["mac"].as_str().unwrap()[9..11], 16).unwrap();
        let id = host["id"].as_str().unwrap();
        let patched = admin
            .patch(&format!("/v1/hosts/{id}"), json!({"boot_mac": mac(n, 3)}))
            .await;
        assert_eq!(patched.status, StatusCode::OK, "{}", patched.text);
    }
    for (name, body) in [
        (
            "prod-v4",
            json!({"ranges": [{"start": "192.168.10.7", "end": "192.168.10.99"}], "prefix": 24,
                   "gateway": "192.168.10.1", "dns_servers": ["192.168.10.53"]}),
        ),
        (
            "prod-v6",
            json!({"ranges": [{"subnet": "2001:db8:10::/64"}], "prefix": 64,
                   "gateway": "2001:db8:10::1", "dns_servers": ["2001:db8::53"]}),
        ),
    ] {
        let mut body = body;
        body["name"] = json!(name);
        body["pod_manager"] = json!(site.pm);
        site.admin.created("/v1/ip_pools", body).await;
    }
    site
}

/// The example template of `docs/network-config.md`, with NICs chosen by MAC for host `n`.
fn template(n: u32) -> Value {
    json!({
        "links": [
            {"id": "nic1", "type": "phy", "nic": {"mac": mac(n, 1)}, "mtu": 9000},
            {"id": "nic2", "type": "phy", "nic": {"mac": mac(n, 2)}, "mtu": 9000},
            {"id": "boot", "type": "phy", "nic": "boot"},
            {"id": "bond0", "type": "bond", "links": ["nic1", "nic2"], "mode": "802.3ad",
             "hash_policy": "layer3+4", "miimon": 100, "mtu": 9000},
            {"id": "bond0.100", "type": "vlan", "link": "bond0", "vlan_id": 100}
        ],
        "networks": [
            {"id": "prod", "type": "ipv4", "link": "bond0.100", "pool": "prod-v4", "default_route": true,
             "routes": [{"network": "10.0.0.0/8", "gateway": "192.168.10.254"}]},
            {"id": "prod6", "type": "ipv6", "link": "bond0", "pool": "prod-v6", "default_route": true},
            {"id": "mgmt", "type": "ipv4_dhcp", "link": "boot"}
        ],
        "dns": {"servers": ["192.0.2.53"], "from_pools": true},
        "meta_data": {"rack": "r12"},
        "tenants": {"meta_data": true, "links": {"bond0": {"networks": true, "vlans": [[200, 299]]}}}
    })
}

/// Makes `owner` own the network config of the site's hosts (`network_config_owner`).
async fn set_owner(site: &Site, owner: &str) {
    let patched = site
        .admin
        .patch(
            &format!("/v1/pod_managers/{}", site.pm),
            json!({ "network_config_owner": owner }),
        )
        .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.text);
}

fn claim_body(site: &Site, extra: Value) -> Value {
    let mut body = json!({"pod_manager": site.pm, "image": {"url": "http://images.invalid/os.qcow2"}, "online": false});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

/// The host number (`node-N`) of a bound claim.
fn host_number(claim: &Value) -> u32 {
    let mac = claim["host"]["nics"][0]["mac"].as_str().unwrap();
    u32::from_str_radix(&mac[9..11], 16).unwrap()
}

fn nics(n: u32) -> Vec<(String, String)> {
    (1..=3).map(|i| (format!("eno{i}"), mac(n, i))).collect()
}

async fn netplan_of(network_data: &Value, n: u32) -> String {
    let nics = nics(n);
    let pairs: Vec<(&str, &str)> = nics.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    cloud_init::netplan(network_data, &pairs).await.unwrap()
}

#[tokio::test]
async fn the_sites_template_renders_bond_vlan_static_dhcp_and_dns_as_cloud_init_reads_it() {
    let site = site(1).await;
    let put = site
        .admin
        .put(
            &format!("/v1/pod_managers/{}/network_template", site.pm),
            template(1),
        )
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.text);

    // Before anyone claims the host, the admin previews what the template renders for it: each
    // pool's network address stands in for the address a claim will get, and nothing is held.
    let hosts = site
        .admin
        .get(&format!("/v1/hosts?pod_manager={}", site.pm))
        .await;
    let unclaimed = hosts.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "system")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let preview = site
        .admin
        .get(&format!(
            "/v1/hosts/{unclaimed}/rendered?phase=provisioning"
        ))
        .await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.text);
    assert_eq!(
        preview.body["preview"]["unallocated"],
        json!([{"pool": "prod-v4", "stand_in": "192.168.10.0"},
               {"pool": "prod-v6", "stand_in": "2001:db8:10::"}]),
        "{}",
        preview.text
    );
    assert!(
        preview.body["preview"]["message"]
            .as_str()
            .unwrap()
            .contains("no address allocated"),
        "{}",
        preview.text
    );
    assert_eq!(preview.body["claim"], Value::Null);
    let prod = &preview.body["network_data"]["networks"][0];
    assert_eq!(prod["ip_address"], "192.168.10.0", "{prod}");
    assert_eq!(prod["netmask"], "255.255.255.0", "{prod}");
    assert_eq!(preview.body["meta_data"]["meta"], json!({"rack": "r12"}));
    let pools = site
        .admin
        .get(&format!("/v1/ip_pools?pod_manager={}", site.pm))
        .await;
    for pool in pools.body["items"].as_array().unwrap() {
        assert_eq!(pool["usage"]["allocated"], "0", "a preview held {pool}");
    }

    let alice = site.tenant("alice").await;
    let bob = site.tenant("bob").await;
    // The site owns network config: a claim may not bring its own.
    let refused = alice
        .post(
            "/v1/claims",
            claim_body(
                &site,
                json!({"network_data": {"links": [], "networks": []}}),
            ),
        )
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
    assert_eq!(refused.code(), "network_config_owned_by_site");

    let claim = alice
        .created(
            "/v1/claims",
            claim_body(&site, json!({"meta_data": {"role": "worker"}})),
        )
        .await;
    assert_eq!(claim.body["state"], "bound", "{}", claim.text);
    let bound: ClaimView = claim.view();
    let id = bound.id.as_str();
    let host_id = bound.host.as_ref().expect("bound").id.as_str();
    let rendered = alice.get(&format!("/v1/claims/{id}/rendered")).await;
    assert_eq!(rendered.status, StatusCode::OK, "{}", rendered.text);
    let nd = &rendered.body["network_data"];
    let md = &rendered.body["meta_data"];
    assert_eq!(md["uuid"], id, "{md}");
    assert_eq!(md["claim"], id);
    assert_eq!(md["pod_manager"], site.pm.as_str());
    assert_eq!(md["local-hostname"], "node-1");
    assert_eq!(md["meta"], json!({"rack": "r12", "role": "worker"}), "{md}");
    // The addresses the template takes are held for the claim and show in its view.
    let view = alice.get(&format!("/v1/claims/{id}")).await;
    let addresses: Vec<String> = view
        .view::<ClaimView>()
        .host
        .expect("the claim is bound")
        .addresses
        .into_iter()
        .map(|a| a.address)
        .collect();
    assert!(
        addresses.iter().any(|a| a == "192.168.10.7"),
        "{}",
        view.text
    );
    assert!(
        addresses.iter().any(|a| a == "2001:db8:10::2"),
        "{}",
        view.text
    );
    // The admin sees the same documents; another tenant sees nothing.
    let as_admin = site
        .admin
        .get(&format!("/v1/hosts/{host_id}/rendered?phase=provisioning"))
        .await;
    assert_eq!(as_admin.body["network_data"], *nd, "{}", as_admin.text);
    assert_eq!(as_admin.body.get("preview"), None, "{}", as_admin.text);
    assert_eq!(
        bob.get(&format!("/v1/claims/{id}/rendered")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        bob.get(&format!("/v1/hosts/{host_id}/rendered"))
            .await
            .status,
        StatusCode::FORBIDDEN
    );

    // cloud-init's reading of it, on the host.
    let netplan = netplan_of(nd, 1).await;
    for expected in [
        "bonds:",
        "bond0:",
        "- eno1",
        "- eno2",
        "mode: 802.3ad",
        "transmit-hash-policy: layer3+4",
        "mii-monitor-interval: 100",
        "mtu: 9000",
        "vlans:",
        "bond0.100:",
        "id: 100",
        "link: bond0",
        "- 192.168.10.7/24",
        "to: 10.0.0.0/8",
        "via: 192.168.10.254",
        "via: 192.168.10.1",
        "- 2001:db8:10::2/64",
        "via: 2001:db8:10::1",
        "dhcp4: true",
        "- 192.0.2.53",
        "- 192.168.10.53",
        "- 2001:db8::53",
    ] {
        assert!(netplan.contains(expected), "no `{expected}` in\n{netplan}");
    }
    // eno3 (the boot NIC) is the one on DHCP.
    let eno3 = &netplan[netplan.find("eno3:").expect("eno3 in netplan")..];
    assert!(
        eno3[..eno3
            .find('\n')
            .map_or(eno3.len(), |i| i + 80)
            .min(eno3.len())]
            .contains("dhcp4: true"),
        "eno3 is not on DHCP:\n{netplan}"
    );
    // netplan's generator accepts it and writes a unit for every link.
    let units = cloud_init::netplan_generate(&netplan).await.unwrap();
    for link in ["eno1", "eno2", "eno3", "bond0", "bond0.100"] {
        assert!(
            units
                .iter()
                .any(|u| u == &format!("10-netplan-{link}.network")),
            "no unit for {link}: {units:?}"
        );
    }

    // Templates are checked when stored: the field at fault is named.
    let mut bad = template(1);
    bad["links"][3]["mode"] = json!("fastest");
    let r = site
        .admin
        .put(
            &format!("/v1/pod_managers/{}/network_template", site.pm),
            bad,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "links[3].mode", "{}", r.text);
    let mut bad = template(1);
    bad["networks"][0]["pool"] = json!("no-such-pool");
    let r = site
        .admin
        .put(
            &format!("/v1/pod_managers/{}/network_template", site.pm),
            bad,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "networks[0].pool", "{}", r.text);
    assert!(r.message().contains("no-such-pool"), "{}", r.text);
    let mut bad = template(1);
    bad["networks"][0]["pool"] = json!("prod-v6");
    bad["networks"][1]["pool"] = json!("prod-v4");
    let r = site
        .admin
        .put(
            &format!("/v1/pod_managers/{}/network_template", site.pm),
            bad,
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "networks[0].pool", "{}", r.text);
    assert!(r.message().contains("IPv6"), "{}", r.text);
    // The stored template is the good one still.
    let stored = site
        .admin
        .get(&format!("/v1/pod_managers/{}/network_template", site.pm))
        .await;
    assert_eq!(stored.body, template(1));
}

#[tokio::test]
async fn consumer_and_layered_policies_take_only_what_fits_the_host_and_the_site() {
    let site = site(2).await;
    set_owner(&site, "consumer").await;
    let alice = site.tenant("alice").await;

    // Invalid whatever the host: a 422 naming the field.
    let bad_mask = json!({
        "links": [{"id": "p0", "type": "phy", "ethernet_mac_address": mac(1, 1)}],
        "networks": [{"id": "n0", "type": "ipv4", "link": "p0", "ip_address": "203.0.113.9",
                      "netmask": "255.0.255.0"}]
    });
    let r = alice
        .post(
            "/v1/claims",
            claim_body(&site, json!({"network_data": bad_mask})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "network_data.networks[0].netmask", "{}", r.text);
    let r = alice
        .post(
            "/v1/claims",
            claim_body(
                &site,
                json!({"network_data": {"links": [], "networks": [{"id": "n0", "type": "ipv4_dhcp", "link": "nowhere"}]}}),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(r.field(), "network_data.networks[0].link", "{}", r.text);

    // Names a NIC of node-2 only: the claim binds to node-2, not to node-1 (first in order).
    let mine = json!({
        "links": [{"id": "p0", "type": "phy", "ethernet_mac_address": mac(2, 2).to_uppercase()}],
        "networks": [{"id": "n0", "type": "ipv4", "link": "p0", "ip_address": "203.0.113.9",
                      "netmask": "255.255.255.0",
                      "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "203.0.113.1"}]}],
        "services": [{"type": "dns", "address": "203.0.113.53"}]
    });
    let claim = alice
        .created(
            "/v1/claims",
            claim_body(&site, json!({"network_data": mine})),
        )
        .await;
    assert_eq!(claim.body["state"], "bound", "{}", claim.text);
    assert_eq!(host_number(&claim.body), 2, "{}", claim.text);
    let id = claim.view::<ClaimView>().id.to_string();
    let rendered = alice.get(&format!("/v1/claims/{id}/rendered")).await;
    let nd = &rendered.body["network_data"];
    assert_eq!(nd["links"][0]["ethernet_mac_address"], mac(2, 2), "{nd}");
    let netplan = netplan_of(nd, 2).await;
    for expected in [
        "eno2:",
        "- 203.0.113.9/24",
        "via: 203.0.113.1",
        "- 203.0.113.53",
    ] {
        assert!(netplan.contains(expected), "no `{expected}` in\n{netplan}");
    }
    cloud_init::netplan_generate(&netplan).await.unwrap();
    // A replacement is checked against the bound host.
    let other_host = json!({"links": [{"id": "p0", "type": "phy", "ethernet_mac_address": mac(1, 1)}], "networks": []});
    let r = alice
        .patch(
            &format!("/v1/claims/{id}"),
            json!({"network_data": other_host}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert_eq!(
        r.field(),
        "network_data.links[0].ethernet_mac_address",
        "{}",
        r.text
    );
    // A claim that fits no free host waits, and says why.
    let nowhere = json!({"links": [{"id": "p0", "type": "phy", "ethernet_mac_address": "52:54:00:77:77:77"}], "networks": []});
    let waiting = alice
        .created(
            "/v1/claims",
            claim_body(&site, json!({"network_data": nowhere})),
        )
        .await;
    assert_eq!(waiting.body["state"], "pending", "{}", waiting.text);
    assert!(
        waiting.body["reason"]
            .as_str()
            .unwrap_or("")
            .contains("network_data"),
        "{}",
        waiting.text
    );
    let waiting_id = waiting.view::<ClaimView>().id;
    alice.delete(&format!("/v1/claims/{waiting_id}")).await;

    // Layered: the site's template, plus what tenants may add on bond0.
    set_owner(&site, "layered").await;
    let put = site
        .admin
        .put(
            &format!("/v1/pod_managers/{}/network_template", site.pm),
            template(1),
        )
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.text);
    for (additions, field) in [
        (
            json!({"links": [{"id": "app", "type": "vlan", "vlan_link": "bond0", "vlan_id": 100}], "networks": []}),
            "network_data.links[0].vlan_id",
        ),
        (
            json!({"networks": [{"id": "x", "type": "ipv4_dhcp", "link": "boot"}]}),
            "network_data.networks[0].link",
        ),
        (
            json!({"networks": [{"id": "prod", "type": "ipv4_dhcp", "link": "bond0"}]}),
            "network_data.networks[0].id",
        ),
    ] {
        let r = alice
            .post(
                "/v1/claims",
                claim_body(&site, json!({"network_data": additions})),
            )
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert_eq!(r.field(), field, "{}", r.text);
    }
    let additions = json!({
        "links": [{"id": "app", "type": "vlan", "vlan_link": "bond0", "vlan_id": 210}],
        "networks": [{"id": "app-net", "type": "ipv4", "link": "app", "ip_address": "172.16.5.9",
                      "netmask": "255.255.0.0"}]
    });
    let layered = alice
        .created(
            "/v1/claims",
            claim_body(&site, json!({"network_data": additions})),
        )
        .await;
    assert_eq!(layered.body["state"], "bound", "{}", layered.text);
    let n = host_number(&layered.body);
    assert_eq!(n, 1, "node-2 is still claimed: {}", layered.text);
    let id = layered.view::<ClaimView>().id;
    // Rendered while its provisioning runs: an answer other than the documents (seen once on
    // PostgreSQL under CI's load, its body unrecorded) is shown if it lasts.
    let path = format!("/v1/claims/{id}/rendered");
    let nd = eventually(
        Duration::from_secs(20),
        "the rendered documents",
        || async {
            let reply = alice.get(&path).await;
            if reply.status != StatusCode::OK {
                eprintln!("GET {path}: {} {}", reply.status, reply.text);
            }
            (reply.status == StatusCode::OK).then(|| reply.body["network_data"].clone())
        },
    )
    .await;
    // The tenant's network is rendered as the template's are: each with its `network_id`.
    for network in nd["networks"].as_array().unwrap() {
        assert_eq!(network["network_id"], network["id"], "{nd}");
    }
    assert!(
        nd["networks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["id"] == "app-net"),
        "{nd}"
    );
    let netplan = netplan_of(&nd, n).await;
    for expected in [
        "bond0.100:",
        "- 192.168.10.7/24",
        // cloud-init names a VLAN after its link and id, whatever the link's id.
        "bond0.210:",
        "id: 210",
        "- 172.16.5.9/16",
    ] {
        assert!(netplan.contains(expected), "no `{expected}` in\n{netplan}");
    }
    cloud_init::netplan_generate(&netplan).await.unwrap();
}

/// A database written before the hosts' MACs had a table of their own (migration 0021): after
/// the upgrade the MACs of the hosts it already had are found, so a claim naming a NIC binds to
/// the host that has it.
#[tokio::test]
async fn after_the_upgrade_a_claim_finds_the_nics_of_hosts_an_earlier_release_wrote() {
    use sqlx::Connection;
    let site = site(2).await;
    set_owner(&site, "consumer").await;
    // The database as the earlier release left it: no table of MACs, no triggers, the
    // migration not run.
    sqlx::any::install_default_drivers();
    let url = site.server.database_url();
    let mut db = sqlx::AnyConnection::connect(&url).await.unwrap();
    let mut undo = vec![
        "DROP TRIGGER host_nics_insert",
        "DROP TRIGGER host_nics_update",
        "DROP TABLE host_nics",
        "DELETE FROM _sqlx_migrations WHERE version = 21",
    ];
    if url.starts_with("postgres") {
        undo[0] = "DROP TRIGGER host_nics_insert ON hosts";
        undo[1] = "DROP TRIGGER host_nics_update ON hosts";
        undo.insert(3, "DROP FUNCTION podium_host_nics()");
    }
    for statement in undo {
        sqlx::query(statement).execute(&mut db).await.unwrap();
    }
    db.close().await.unwrap();
    let Site {
        server,
        bmc,
        pm,
        images,
        ..
    } = site;
    let server = server.restart().await;
    let site = Site {
        admin: server.admin(),
        server,
        bmc,
        pm,
        images,
    };

    let alice = site.tenant("alice").await;
    let mine = json!({
        "links": [{"id": "p0", "type": "phy", "ethernet_mac_address": mac(2, 3)}],
        "networks": [{"id": "n0", "type": "ipv4_dhcp", "link": "p0"}]
    });
    let claim = alice
        .created(
            "/v1/claims",
            claim_body(&site, json!({"network_data": mine})),
        )
        .await;
    assert_eq!(claim.body["state"], "bound", "{}", claim.text);
    assert_eq!(host_number(&claim.body), 2, "{}", claim.text);
}

#[tokio::test]
async fn config_drives_carry_the_documents_for_cloud_init_until_they_expire_or_the_claim_goes() {
    let site = site(1).await;
    let put = site
        .admin
        .put(
            &format!("/v1/pod_managers/{}/network_template", site.pm),
            template(1),
        )
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.text);
    // DHCP-less: a preprovisioning pool for the ramdisk.
    let pre = site
        .admin
        .post(
            "/v1/ip_pools",
            json!({"name": "prov", "ranges": [{"subnet": "10.21.0.0/24"}], "prefix": 24,
                   "gateway": "10.21.0.1", "dns_servers": ["10.21.0.53"], "pod_manager": site.pm,
                   "plugin": {"name": "ipam-dhcpless"}}),
        )
        .await;
    assert_eq!(pre.status, StatusCode::CREATED, "{}", pre.text);
    let hosts = site
        .admin
        .get(&format!("/v1/hosts?pod_manager={}", site.pm))
        .await;
    let host_id = hosts.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "system")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let anonymous = site.server.client(None);
    let dir = tempfile::tempdir().unwrap();
    // Viewing takes nothing: before a drive is made, the ramdisk's address is not held yet.
    let peek = site
        .admin
        .get(&format!(
            "/v1/hosts/{host_id}/rendered?phase=preprovisioning"
        ))
        .await;
    assert_eq!(peek.status, StatusCode::CONFLICT, "{}", peek.text);
    assert_eq!(peek.code(), "addresses_not_held", "{}", peek.text);

    // The ramdisk's drive: the boot NIC (eno3) static from the preprovisioning pool.
    let drive = site
        .admin
        .post(
            &format!("/v1/hosts/{host_id}/config_drive"),
            json!({"phase": "preprovisioning"}),
        )
        .await;
    assert_eq!(drive.status, StatusCode::CREATED, "{}", drive.text);
    let (files, _) = download(&anonymous, &drive.body, dir.path(), "pre").await;
    let nd: Value = serde_json::from_slice(&files["openstack/latest/network_data.json"]).unwrap();
    let netplan = netplan_of(&nd, 1).await;
    let eno3 = &netplan[netplan.find("eno3:").expect("eno3 configured")..];
    for expected in ["- 10.21.0.2/24", "via: 10.21.0.1", "- 10.21.0.53"] {
        assert!(
            eno3.contains(expected),
            "no `{expected}` for eno3 in\n{netplan}"
        );
    }
    assert!(
        !netplan.contains("dhcp4: true"),
        "DHCP in a DHCP-less boot:\n{netplan}"
    );
    assert!(!files.contains_key("openstack/latest/user_data"));
    let peek = site
        .admin
        .get(&format!(
            "/v1/hosts/{host_id}/rendered?phase=preprovisioning"
        ))
        .await;
    assert_eq!(peek.status, StatusCode::OK, "{}", peek.text);
    assert_eq!(peek.body["network_data"], nd);

    // The instance's drive, made by the tenant, with binary user data.
    let alice = site.tenant("alice").await;
    let user_data: Vec<u8> = vec![0x1f, 0x8b, 0x08, 0x00, 0xff, 0x00, 0x7f, 0x80];
    let claim = alice
        .post(
            "/v1/claims",
            claim_body(
                &site,
                json!({"user_data_base64": base64::engine::general_purpose::STANDARD.encode(&user_data)}),
            ),
        )
        .await;
    assert_eq!(claim.body["state"], "bound", "{}", claim.text);
    let id = claim.view::<ClaimView>().id.to_string();
    let drive = alice
        .created(
            &format!("/v1/claims/{id}/config_drive"),
            json!({"expires_in": 600}),
        )
        .await;
    assert_eq!(drive.body["phase"], "provisioning");
    let (files, image) = download(&anonymous, &drive.body, dir.path(), "prov").await;
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "openstack/latest/meta_data.json",
            "openstack/latest/network_data.json",
            "openstack/latest/user_data"
        ]
    );
    let rendered = alice.get(&format!("/v1/claims/{id}/rendered")).await;
    let md: Value = serde_json::from_slice(&files["openstack/latest/meta_data.json"]).unwrap();
    let nd: Value = serde_json::from_slice(&files["openstack/latest/network_data.json"]).unwrap();
    assert_eq!(md, rendered.body["meta_data"]);
    assert_eq!(nd, rendered.body["network_data"]);
    assert_eq!(files["openstack/latest/user_data"], user_data);
    // cloud-init's ConfigDrive source reads the same tree.
    let read = cloud_init::read_config_drive(&dir.path().join("prov"))
        .await
        .unwrap();
    assert_eq!(read["metadata"]["uuid"], id.as_str(), "{read}");
    assert_eq!(read["networkdata"], nd, "{read}");
    assert_eq!(
        read["userdata_base64"],
        base64::engine::general_purpose::STANDARD.encode(&user_data)
    );
    let _ = image;

    // The URL is the only credential: a guess, or a truncated one, is not found; once the
    // claim is released, neither is the real one.
    let url = drive.body["url"].as_str().unwrap();
    let path = &url[url.find("/v1/").unwrap()..];
    let guessed = format!("/v1/config_drives/cd_{}.img", "0".repeat(64));
    assert_eq!(anonymous.get_bytes(&guessed).await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        anonymous.get_bytes(&path[..path.len() - 10]).await.0,
        StatusCode::NOT_FOUND
    );
    let bad_ttl = alice
        .post(
            &format!("/v1/claims/{id}/config_drive"),
            json!({"expires_in": 5}),
        )
        .await;
    assert_eq!(
        bad_ttl.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        bad_ttl.text
    );
    assert_eq!(bad_ttl.field(), "expires_in");
    let released = alice.delete(&format!("/v1/claims/{id}")).await;
    assert_eq!(released.status, StatusCode::ACCEPTED, "{}", released.text);
    assert_eq!(anonymous.get_bytes(path).await.0, StatusCode::NOT_FOUND);
}

/// Downloads a config drive with no token, checks its digest and label, and copies its files
/// out with mtools into `dir/name`.
async fn download(
    client: &Client,
    drive: &Value,
    dir: &std::path::Path,
    name: &str,
) -> (std::collections::BTreeMap<String, Vec<u8>>, Vec<u8>) {
    let url = drive["url"].as_str().unwrap();
    let path = &url[url.find("/v1/config_drives/").expect("a config drive URL")..];
    let (status, headers, bytes) = client.get_bytes(path).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/octet-stream");
    assert_eq!(bytes.len() as u64, drive["size"].as_u64().unwrap());
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&bytes)),
        drive["sha256"].as_str().unwrap()
    );
    let image = dir.join(format!("{name}.img"));
    std::fs::write(&image, &bytes).unwrap();
    let id = vfat::blkid(&image).await.unwrap();
    assert_eq!(id.get("TYPE").map(String::as_str), Some("vfat"), "{id:?}");
    assert_eq!(
        id.get("LABEL").map(String::as_str),
        Some("config-2"),
        "{id:?}"
    );
    let out = dir.join(name);
    std::fs::create_dir_all(&out).unwrap();
    (vfat::files(&image, &out).await.unwrap(), bytes)
}
