//! The component tree behind a pod manager (issue 42): DMTF's blade enclosure, served as it is by
//! sushy-tools' `sushy-static`, synced by Podium and read back through the API.

use podium_tests::composition::mockup;
use podium_tests::sushy::SushyStatic;
use podium_tests::{Client, TestServer};
use podium_types::HostKind;
use podium_types::views::{ChassisView, HostView, List};
use reqwest::StatusCode;
use serde_json::{Value, json};

const ENCLOSURE: &str = "/redfish/v1/Chassis/MultiBladeEncl";

/// Points pod manager `pm` at the service at `url`, and syncs it.
async fn resynced_at(admin: &Client, pm: &str, url: &str) {
    let moved = admin
        .patch(&format!("/v1/pod_managers/{pm}"), json!({"url": url}))
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.text);
    admin.sync_all(&[pm.to_owned()]).await;
}

async fn chassis_of(admin: &Client, pm: &str) -> Vec<ChassisView> {
    let reply = admin.get(&format!("/v1/pod_managers/{pm}/chassis")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply.view::<List<ChassisView>>().items
}

fn by_id<'a>(tree: &'a [ChassisView], chassis_id: &str) -> &'a ChassisView {
    tree.iter()
        .find(|c| c.chassis_id == chassis_id)
        .unwrap_or_else(|| panic!("{chassis_id} in {tree:#?}"))
}

/// The enclosure and its four blades become chassis of the pod manager, linked as the mockup
/// links them; each blade's system is a host whose path is the enclosure then its blade, and the
/// hosts of a chassis are those of every chassis within it.
#[tokio::test]
async fn a_pod_manager_keeps_its_blade_enclosure_as_a_tree() {
    let folder = mockup("public-bladed");
    let bmc = SushyStatic::start(&folder)
        .await
        .expect("sushy-static starts");
    let server = TestServer::start().await;
    let admin = server.admin();
    let pm = admin.synced_site(&bmc.url()).await;

    let tree = chassis_of(&admin, &pm).await;
    assert_eq!(tree.len(), 5, "{tree:#?}");
    let enclosure = by_id(&tree, ENCLOSURE);
    assert_eq!(enclosure.chassis_type, "Enclosure");
    assert_eq!(enclosure.parent, None);
    assert!(enclosure.path.is_empty());
    assert!(enclosure.hosts.is_empty(), "it holds no system itself");
    assert_eq!(
        enclosure.location.as_deref(),
        Some("row North, rack WEB43, U12")
    );
    // The four blades' systems are the hosts; the enclosure and its blades are chassis only.
    let hosts: Vec<HostView> = admin.hosts_all(&format!("&pod_manager={pm}")).await;
    assert_eq!(
        hosts.iter().map(|h| h.kind).collect::<Vec<_>>(),
        [HostKind::System; 4],
        "{hosts:#?}"
    );
    for n in 1..=4 {
        let blade = by_id(&tree, &format!("/redfish/v1/Chassis/Blade{n}"));
        let file: Value = serde_json::from_str(
            &std::fs::read_to_string(folder.join(format!("Chassis/Blade{n}/index.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(blade.name, file["Name"]);
        assert_eq!(blade.chassis_type, "Blade");
        assert_eq!(blade.parent.as_ref(), Some(&enclosure.id));
        assert_eq!(
            blade.path.iter().map(|c| &c.id).collect::<Vec<_>>(),
            [&enclosure.id]
        );
        assert_eq!(blade.pod_manager.to_string(), pm);
        // The blade holds the host of the system its links name, and that host's path ends in it.
        let system = file["Links"]["ComputerSystems"][0]["@odata.id"]
            .as_str()
            .expect("a blade's system");
        let host = hosts
            .iter()
            .find(|h| h.system_id == system)
            .unwrap_or_else(|| panic!("a host of {system}"));
        assert_eq!(blade.hosts, std::slice::from_ref(&host.id));
        assert_eq!(
            host.chassis
                .iter()
                .map(|c| (c.name.as_str(), c.chassis_type.as_str()))
                .collect::<Vec<_>>(),
            [
                (enclosure.name.as_str(), "Enclosure"),
                (blade.name.as_str(), "Blade")
            ]
        );
        let one = admin.get(&format!("/v1/hosts/{}", host.id)).await;
        assert_eq!(one.view::<HostView>().chassis, host.chassis);
        let within = admin.hosts_all(&format!("&chassis={}", blade.id)).await;
        assert_eq!(within.iter().map(|h| &h.id).collect::<Vec<_>>(), [&host.id]);
        // The chassis read alone is the one the list shows.
        let alone = admin.get(&format!("/v1/chassis/{}", blade.id)).await;
        assert_eq!(alone.status, StatusCode::OK, "{}", alone.text);
        // (A background sync may have seen it again since the list was read.)
        let mut alone = alone.view::<ChassisView>();
        (alone.updated_at, alone.last_seen_at) = (blade.updated_at, blade.last_seen_at);
        assert_eq!(&alone, blade);
    }
    // The enclosure's hosts are its blades'.
    let mut within: Vec<String> = admin
        .hosts_all(&format!("&chassis={}", enclosure.id))
        .await
        .into_iter()
        .map(|h| h.system_id)
        .collect();
    within.sort();
    let mut systems: Vec<String> = hosts.iter().map(|h| h.system_id.clone()).collect();
    systems.sort();
    assert_eq!(within, systems);

    // A second sync changes nothing.
    admin.sync_all(std::slice::from_ref(&pm)).await;
    let again = chassis_of(&admin, &pm).await;
    assert_eq!(
        again
            .iter()
            .map(|c| (&c.id, &c.path, &c.hosts, c.state))
            .collect::<Vec<_>>(),
        tree.iter()
            .map(|c| (&c.id, &c.path, &c.hosts, c.state))
            .collect::<Vec<_>>()
    );
}

/// What the API answers for a chassis that does not exist, a malformed id, and a pod manager
/// that does not exist; a tenant sees none of it.
#[tokio::test]
async fn chassis_routes_refuse_what_they_cannot_answer() {
    let server = TestServer::start().await;
    let admin = server.admin();
    let unknown = podium_types::ChassisId::generate();
    let reply = admin.get(&format!("/v1/chassis/{unknown}")).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.text);
    assert!(
        reply.message().contains(&unknown.to_string()),
        "{}",
        reply.text
    );
    let reply = admin.get("/v1/hosts?chassis=not-an-id").await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.text
    );
    assert_eq!(reply.field(), "chassis");
    let pm = podium_types::PodManagerId::generate();
    let reply = admin.get(&format!("/v1/pod_managers/{pm}/chassis")).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.text);
    let reply = admin
        .get(&format!("/v1/pod_managers/{pm}/chassis?limit=0"))
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.text
    );
    let tenant = admin.tenant_named("t1").await;
    let tenant = server.client(Some(&admin.token_for(&tenant).await));
    let reply = tenant.get(&format!("/v1/chassis/{unknown}")).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.text);
}

/// A chassis the service no longer lists is kept, marked `missing`, and the host it held has no
/// place in the tree until a sync finds one; when the service lists it again it is present, with
/// the same id, and holds its host again.
#[tokio::test]
async fn a_chassis_that_disappears_is_marked_missing() {
    let whole = mockup("public-bladed");
    let without = tempfile::tempdir().unwrap();
    podium_tests::composition::copy_mockup(&whole, without.path());
    // The service without Blade4: out of the collection and out of the enclosure.
    podium_tests::composition::edit_json(&without.path().join("Chassis/index.json"), |c| {
        let members = c["Members"].as_array_mut().unwrap();
        members.retain(|m| m["@odata.id"] != "/redfish/v1/Chassis/Blade4");
        c["Members@odata.count"] = json!(members.len());
    });
    podium_tests::composition::edit_json(
        &without.path().join("Chassis/MultiBladeEncl/index.json"),
        |c| {
            c["Links"]["Contains"]
                .as_array_mut()
                .unwrap()
                .retain(|m| m["@odata.id"] != "/redfish/v1/Chassis/Blade4");
        },
    );
    let full = SushyStatic::start(&whole)
        .await
        .expect("sushy-static starts");
    let reduced = SushyStatic::start(without.path())
        .await
        .expect("sushy-static starts");
    let server = TestServer::start().await;
    let admin = server.admin();
    let pm = admin.synced_site(&full.url()).await;
    let before = chassis_of(&admin, &pm).await;
    let blade4 = by_id(&before, "/redfish/v1/Chassis/Blade4").clone();
    assert_eq!(blade4.hosts.len(), 1);

    resynced_at(&admin, &pm, &reduced.url()).await;
    let after = chassis_of(&admin, &pm).await;
    assert_eq!(after.len(), 5, "kept, not deleted");
    let gone = by_id(&after, "/redfish/v1/Chassis/Blade4");
    assert_eq!(gone.state.as_str(), "missing");
    assert!(gone.hosts.is_empty(), "{gone:#?}");
    let host = admin.get(&format!("/v1/hosts/{}", blade4.hosts[0])).await;
    assert!(host.view::<HostView>().chassis.is_empty(), "{}", host.text);
    for other in after.iter().filter(|c| c.id != blade4.id) {
        assert_eq!(other.state.as_str(), "present", "{other:#?}");
    }

    resynced_at(&admin, &pm, &full.url()).await;
    let returned = by_id(&chassis_of(&admin, &pm).await, "/redfish/v1/Chassis/Blade4").clone();
    assert_eq!(returned.id, blade4.id);
    assert_eq!(returned.state.as_str(), "present");
    assert_eq!(returned.hosts, blade4.hosts);
}

/// A tenant granted one blade claims only that blade's host, sees only that blade, and cannot
/// name another; a tenant granted the whole pod manager claims a host of the blade, or of the
/// enclosure, it asks for. A grant naming a chassis its pod manager lacks is refused.
#[tokio::test]
async fn grants_and_claims_of_a_chassis_bind_only_hosts_inside_it() {
    let bmc = SushyStatic::start(&mockup("public-bladed"))
        .await
        .expect("sushy-static starts");
    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let server = TestServer::start().await;
    let admin = server.admin();
    let pm = admin.synced_site(&bmc.url()).await;
    let hosts = admin.systems_in_state(&pm, 4, "available").await;
    let tree = chassis_of(&admin, &pm).await;
    let enclosure = by_id(&tree, ENCLOSURE);
    let blade = |n: u32| by_id(&tree, &format!("/redfish/v1/Chassis/Blade{n}"));
    let claim = |chassis: Option<&str>| {
        let mut body =
            json!({"pod_manager": pm, "image": {"url": images.url("/os.iso")}, "online": false});
        if let Some(chassis) = chassis {
            body["chassis"] = json!(chassis);
        }
        body
    };

    // A grant of a chassis the pod manager does not have.
    let one = admin.tenant_named("one").await;
    let refused = admin
        .post(
            "/v1/grants",
            json!({"tenant": one, "pod_manager": pm, "chassis": podium_types::ChassisId::generate()}),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.text
    );
    assert_eq!(refused.field(), "chassis");

    // Tenant one: Blade2 only.
    let grant = admin
        .created(
            "/v1/grants",
            json!({"tenant": one, "pod_manager": pm, "chassis": blade(2).id}),
        )
        .await;
    assert_eq!(grant.body["chassis"], json!(blade(2).id));
    let one = server.client(Some(&admin.token_for(&one).await));
    let reached = one.get(&format!("/v1/me/pod_managers/{pm}/chassis")).await;
    assert_eq!(reached.status, StatusCode::OK, "{}", reached.text);
    let reached = reached.body["items"].as_array().unwrap().clone();
    assert_eq!(reached.len(), 1, "{reached:#?}");
    assert_eq!(reached[0]["id"], json!(blade(2).id));
    assert_eq!(
        reached[0]["parent"],
        Value::Null,
        "the enclosure is beyond its grant"
    );
    assert_eq!(reached[0]["path"], json!([]));
    assert!(
        reached[0].get("chassis_id").is_none(),
        "no driver id for a tenant"
    );
    let bound = one.created("/v1/claims", claim(None)).await;
    assert_eq!(
        bound.body["host"]["id"],
        json!(blade(2).hosts[0]),
        "{}",
        bound.text
    );
    let names: Vec<&str> = bound.body["host"]["chassis"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [enclosure.name.as_str(), blade(2).name.as_str()]);
    let waiting = one.created("/v1/claims", claim(None)).await;
    assert_eq!(waiting.body["state"], "pending", "{}", waiting.text);
    assert_eq!(waiting.body["host"], Value::Null);
    for outside in [blade(3).id.to_string(), enclosure.id.to_string()] {
        let refused = one.post("/v1/claims", claim(Some(&outside))).await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            refused.text
        );
        assert_eq!(refused.field(), "chassis");
    }

    // Tenant two: the whole pod manager.
    let two = admin.tenant_named("two").await;
    admin
        .created("/v1/grants", json!({"tenant": two, "pod_manager": pm}))
        .await;
    let two = server.client(Some(&admin.token_for(&two).await));
    let reached = two.get(&format!("/v1/me/pod_managers/{pm}/chassis")).await;
    assert_eq!(
        reached.body["items"].as_array().unwrap().len(),
        5,
        "{}",
        reached.text
    );
    let on_blade3 = two
        .created("/v1/claims", claim(Some(blade(3).id.as_str())))
        .await;
    assert_eq!(on_blade3.body["chassis"], json!(blade(3).id));
    assert_eq!(
        on_blade3.body["host"]["id"],
        json!(blade(3).hosts[0]),
        "{}",
        on_blade3.text
    );
    let in_enclosure = two
        .created("/v1/claims", claim(Some(enclosure.id.as_str())))
        .await;
    let host = in_enclosure.body["host"]["id"].clone();
    assert!(
        [blade(1).hosts[0].clone(), blade(4).hosts[0].clone()]
            .iter()
            .any(|h| json!(h) == host),
        "{}",
        in_enclosure.text
    );
    assert_eq!(hosts.len(), 4);
    // An admin lists no tenant's reach.
    let refused = admin
        .get(&format!("/v1/me/pod_managers/{pm}/chassis"))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text);
}

/// Claims of one spread group take hosts of different racks: with two racks of two enclosures
/// each, the third claim of a group waits though two hosts are free (each in a rack the group
/// holds a host of), a claim of another group takes one at once, and when a claim of the group
/// is released its rack is the group's again.
#[tokio::test]
async fn claims_of_a_spread_group_take_hosts_of_different_racks() {
    use podium_tests::bladed::{self, Shape};
    let folder = tempfile::tempdir().unwrap();
    bladed::write(
        folder.path(),
        Shape {
            racks: 2,
            enclosures_per_rack: 2,
            blades_per_enclosure: 1,
        },
    );
    let bmc = SushyStatic::start(folder.path())
        .await
        .expect("sushy-static starts");
    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let server = TestServer::start().await;
    let admin = server.admin();
    let pm = admin.synced_site(&bmc.url()).await;
    let hosts = admin.systems_in_state(&pm, 4, "available").await;
    let rack_of = |host: &Value| -> String {
        let id = host["id"].as_str().expect("a host");
        let host = hosts
            .iter()
            .find(|h| h.id.as_str() == id)
            .expect("a host of the site");
        assert_eq!(host.chassis.len(), 3, "rack, enclosure, blade: {host:#?}");
        assert_eq!(host.chassis[0].chassis_type, "Rack");
        host.chassis[0].name.clone()
    };
    let (_, token) = admin.granted_tenant("spread", &pm).await;
    let tenant = server.client(Some(&token));
    let claim = |spread: &str| {
        json!({"pod_manager": pm, "image": {"url": images.url("/os.iso")}, "online": false,
               "spread": spread})
    };
    // Two at once: each bind checks the group's racks again as it takes its host.
    let (first, second) = tokio::join!(
        tenant.created("/v1/claims", claim("db")),
        tenant.created("/v1/claims", claim("db"))
    );
    assert_eq!(first.body["spread"], "db");
    let (a, b) = (rack_of(&first.body["host"]), rack_of(&second.body["host"]));
    assert_ne!(a, b, "{}\n{}", first.text, second.text);
    let third = tenant.created("/v1/claims", claim("db")).await;
    assert_eq!(third.body["state"], "pending", "{}", third.text);
    let other = tenant.created("/v1/claims", claim("web")).await;
    assert_eq!(other.body["state"], "bound", "{}", other.text);

    let released = tenant
        .delete(&format!(
            "/v1/claims/{}",
            first.body["id"].as_str().unwrap()
        ))
        .await;
    assert!(released.status.is_success(), "{}", released.text);
    let third_id = third.body["id"].as_str().unwrap().to_owned();
    let bound = podium_tests::eventually(
        std::time::Duration::from_secs(60),
        "the waiting claim of the group binds in the released rack",
        || async {
            let claim = tenant.get(&format!("/v1/claims/{third_id}")).await;
            (claim.body["state"] == "bound").then_some(claim.body)
        },
    )
    .await;
    assert_eq!(rack_of(&bound["host"]), a);

    for bad in ["", "no spaces", &"x".repeat(64)] {
        let refused = tenant.post("/v1/claims", claim(bad)).await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            refused.text
        );
        assert_eq!(refused.field(), "spread");
    }
}

/// sushy-tools' systems stand in its one chassis, so they share a rack: a second claim of a
/// spread group waits though a second host is free.
#[tokio::test]
async fn systems_of_one_chassis_share_a_rack() {
    let site = podium_tests::Site::start(2).await;
    let hosts = site
        .admin
        .hosts_all(&format!("&pod_manager={}", site.pm))
        .await;
    let systems: Vec<_> = hosts
        .iter()
        .filter(|h| h.kind == HostKind::System)
        .collect();
    assert_eq!(systems.len(), 2);
    for system in &systems {
        assert_eq!(system.chassis.len(), 1, "{system:#?}");
        assert_eq!(system.chassis, systems[0].chassis);
    }
    let tenant = site.tenant("t").await;
    let bound = tenant
        .created(
            "/v1/claims",
            site.claim(json!({"spread": "db", "online": false})),
        )
        .await;
    assert_eq!(bound.body["state"], "bound", "{}", bound.text);
    let waiting = tenant
        .created(
            "/v1/claims",
            site.claim(json!({"spread": "db", "online": false})),
        )
        .await;
    assert_eq!(waiting.body["state"], "pending", "{}", waiting.text);
    let other = tenant
        .created("/v1/claims", site.claim(json!({"online": false})))
        .await;
    assert_eq!(other.body["state"], "bound", "{}", other.text);
}

/// A database an earlier release wrote, where a discovery made hosts of kind `chassis` (the
/// enclosure, its blades), is migrated: those hosts go, a claim bound to one fails saying why,
/// and the systems stay hosts.
#[tokio::test]
async fn chassis_an_earlier_release_kept_as_hosts_are_migrated_away() {
    use sqlx::Connection;
    let folder = mockup("public-bladed");
    let bmc = SushyStatic::start(&folder)
        .await
        .expect("sushy-static starts");
    // Behind a proxy that can stop answering: no sync may write the host back while the
    // database is changed, nor find its system again after the restart.
    let proxy = podium_tests::FaultProxy::start(&bmc.url()).await;
    let server = TestServer::start().await;
    let admin = server.admin();
    let pm = admin.synced_site(&proxy.url()).await;
    // Its four systems inspected, so that the claim binds one as it is created.
    admin.systems_in_state(&pm, 4, "available").await;
    let (_, token) = admin.granted_tenant("alice", &pm).await;
    let alice = server.client(Some(&token));
    let claim = alice
        .created(
            "/v1/claims",
            json!({"pod_manager": pm, "image": {"url": "http://images.example/os.iso"},
                   "online": false}),
        )
        .await;
    let claim_id = claim.body["id"].as_str().unwrap().to_owned();
    let bound = claim.body["host"]["id"].as_str().unwrap().to_owned();

    // As the earlier release left it: the claimed host is a chassis, and the migration is
    // not yet run.
    proxy
        .failing
        .store(true, std::sync::atomic::Ordering::Release);
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    sqlx::any::install_default_drivers();
    let url = server.database_url();
    let mut db = sqlx::AnyConnection::connect(&url).await.unwrap();
    sqlx::query("UPDATE hosts SET kind = 'chassis' WHERE id = $1")
        .bind(&bound)
        .execute(&mut db)
        .await
        .unwrap();
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = 38")
        .execute(&mut db)
        .await
        .unwrap();
    db.close().await.unwrap();
    let server = server.restart().await;
    let (admin, alice) = (server.admin(), server.client(Some(&token)));

    let gone = admin.get(&format!("/v1/hosts/{bound}")).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.text);
    let failed = alice.get(&format!("/v1/claims/{claim_id}")).await;
    assert_eq!(failed.body["state"], "failed", "{}", failed.text);
    assert_eq!(failed.body["host"], Value::Null, "{}", failed.text);
    assert!(
        failed.body["reason"]
            .as_str()
            .is_some_and(|r| r.contains("chassis")),
        "{}",
        failed.text
    );
    let left: Vec<HostView> = admin.hosts_all(&format!("&pod_manager={pm}")).await;
    assert_eq!(
        left.len(),
        3,
        "the other blades' systems stay hosts: {left:#?}"
    );
    assert!(left.iter().all(|h| h.kind == HostKind::System), "{left:#?}");
    // The tenant deletes the failed claim and claims again.
    let deleted = alice.delete(&format!("/v1/claims/{claim_id}")).await;
    assert!(deleted.status.is_success(), "{}", deleted.text);
}

/// Chassis power (contract 0.3.0): the enclosure's `Chassis.Reset` reaches sushy-static as the
/// mockup advertises it, and the chassis answered is as read back; what the chassis does not take
/// is a 409 that sends nothing; while a host within the enclosure is claimed its power is a 409
/// naming the host and the claim; a tenant and a bad action are refused.
#[tokio::test]
async fn an_admin_powers_a_chassis_only_while_no_host_within_is_in_use() {
    let folder = tempfile::tempdir().unwrap();
    podium_tests::composition::copy_mockup(&mockup("public-bladed"), folder.path());
    let reset = format!("{ENCLOSURE}/Actions/Chassis.Reset");
    let file = folder.path().join("Chassis/MultiBladeEncl/index.json");
    let mut enclosure: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    enclosure["Actions"] = json!({"#Chassis.Reset": {
        "target": reset,
        "ResetType@Redfish.AllowableValues": ["On", "ForceOff", "GracefulRestart"],
    }});
    std::fs::write(&file, enclosure.to_string()).unwrap();
    // The fourth blade names no system: its host stands in no chassis the tree knows.
    let file = folder.path().join("Chassis/Blade4/index.json");
    let mut blade4: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    blade4["Links"]
        .as_object_mut()
        .unwrap()
        .remove("ComputerSystems");
    std::fs::write(&file, blade4.to_string()).unwrap();
    let bmc = SushyStatic::start(folder.path())
        .await
        .expect("sushy-static starts");
    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let server = TestServer::start().await;
    let admin = server.admin();
    let pm = admin.synced_site(&bmc.url()).await;
    let hosts = admin.systems_in_state(&pm, 4, "available").await;
    let unplaced = hosts
        .iter()
        .find(|h| h.chassis.is_empty())
        .unwrap_or_else(|| panic!("a host placed nowhere: {hosts:#?}"));
    let tree = chassis_of(&admin, &pm).await;
    let enclosure = by_id(&tree, ENCLOSURE).clone();
    let blade = by_id(&tree, "/redfish/v1/Chassis/Blade1").clone();
    let power = |id: &podium_types::ChassisId| format!("/v1/chassis/{id}/power");
    let resets = || bmc.log().matches(&format!("\"POST {reset} ")).count();

    let bad = admin
        .post(&power(&enclosure.id), json!({"action": "explode"}))
        .await;
    bad.assert_invalid("action", "on");
    let (_, token) = admin.granted_tenant("t1", &pm).await;
    let tenant = server.client(Some(&token));
    let refused = tenant
        .post(&power(&enclosure.id), json!({"action": "on"}))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text);

    // A blade of the mockup advertises no reset: nothing is sent.
    let refused = admin
        .post(&power(&blade.id), json!({"action": "force_off"}))
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
    assert_eq!(refused.code(), "chassis_power_unsupported");
    assert!(
        refused.message().contains("#Chassis.Reset"),
        "{}",
        refused.text
    );
    // Nor a reset type the enclosure does not list.
    let refused = admin
        .post(
            &power(&enclosure.id),
            json!({"action": "graceful_shutdown"}),
        )
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
    assert!(
        refused
            .message()
            .contains("allowed: On, ForceOff, GracefulRestart"),
        "{}",
        refused.text
    );
    assert_eq!(resets(), 0, "{}", bmc.log());

    // The enclosure: its reset reaches the service with the reset type, and the chassis is
    // answered as read back (sushy-static changes nothing: still on).
    let done = admin
        .post(&power(&enclosure.id), json!({"action": "off"}))
        .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    let done: ChassisView = done.view();
    assert_eq!(done.id, enclosure.id);
    assert_eq!(done.power_state, Some(podium_types::PowerState::On));
    assert_eq!(resets(), 1, "{}", bmc.log());
    assert!(
        bmc.log().contains(r#"{"ResetType": "ForceOff"}"#)
            || bmc.log().contains(r#"{"ResetType":"ForceOff"}"#),
        "{}",
        bmc.log()
    );

    // An admin's power off of the host placed nowhere is under way (it waits for the OS, which
    // sushy-static never shuts down): that host may stand in the enclosure.
    admin.power(unplaced.id.as_str(), "off").await;
    let refused = admin
        .post(&power(&enclosure.id), json!({"action": "on"}))
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
    assert_eq!(refused.code(), "chassis_in_use");
    assert!(
        refused.message().contains(&unplaced.name),
        "{}",
        refused.text
    );
    assert!(
        refused.message().contains("placed in no chassis"),
        "{}",
        refused.text
    );
    assert_eq!(resets(), 1, "{}", bmc.log());

    // A claim holds a blade's host: the enclosure's power would reach it.
    let claim = tenant
        .created(
            "/v1/claims",
            json!({"pod_manager": pm, "image": {"url": images.url("/os.iso")}, "online": false}),
        )
        .await;
    let host = claim.body["host"]["name"].as_str().unwrap().to_owned();
    let claim_id = claim.body["id"].as_str().unwrap().to_owned();
    let refused = admin
        .post(&power(&enclosure.id), json!({"action": "force_restart"}))
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
    assert_eq!(refused.code(), "chassis_in_use");
    assert!(refused.message().contains(&host), "{}", refused.text);
    assert!(refused.message().contains(&claim_id), "{}", refused.text);
    assert_eq!(resets(), 1, "{}", bmc.log());
}
