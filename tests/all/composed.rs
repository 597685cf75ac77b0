//! Composed nodes (issue 42): an admin composes nodes of a pod manager's resource blocks and
//! decomposes them, against the composition service of `podium_tests::composition`, which starts
//! from DMTF's `public-composability` mockup unchanged and applies DSP0268's rules itself.

use std::time::Duration;

use podium_tests::composition::{Composition, composable, mockup};
use podium_tests::sushy::{FakeSystem, Sushy, SushyConfig, SushyStatic};
use podium_tests::{Client, TestServer, eventually};
use podium_types::views::{ClaimView, ComposedNodeView, CompositionView, HostView, List};
use reqwest::StatusCode;
use serde_json::json;

const BLOCKS: &str = "/redfish/v1/CompositionService/ResourceBlocks";
const ZONE_1: &str = "/redfish/v1/CompositionService/ResourceZones/1";

fn block(name: &str) -> String {
    format!("{BLOCKS}/{name}")
}

async fn nodes(admin: &Client, pm: &str) -> Vec<ComposedNodeView> {
    let reply = admin
        .get(&format!("/v1/pod_managers/{pm}/composed_nodes"))
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply.view::<List<ComposedNodeView>>().items
}

async fn composition(admin: &Client, pm: &str) -> CompositionView {
    let reply = admin
        .get(&format!("/v1/pod_managers/{pm}/composition"))
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply.view()
}

/// A block's composition state and the systems it is composed into, as Podium reads them.
async fn block_state(admin: &Client, pm: &str, name: &str) -> (String, Vec<String>) {
    let service = composition(admin, pm).await;
    let b = service
        .blocks
        .iter()
        .find(|b| b.id == block(name))
        .unwrap_or_else(|| panic!("{name} in {:#?}", service.blocks));
    (b.state.to_string(), b.systems.clone())
}

/// The mockup's composition service behind a pod manager, synced (the mockup as
/// [`composable`] serves it).
async fn composing_site() -> (Composition, TestServer, String, tempfile::TempDir) {
    let folder = composable();
    let service = Composition::start(folder.path())
        .await
        .expect("the service starts");
    let server = TestServer::start().await;
    let pm = server.admin().synced_site(service.url()).await;
    (service, server, pm, folder)
}

/// Decomposes the mockup's `ComposedSystem`: its `ComputeBlock1` is then the one compute block
/// free.
async fn free_the_last_compute_block(admin: &Client, pm: &str) {
    let mockups = nodes(admin, pm)
        .await
        .into_iter()
        .find(|n| n.system_id == "/redfish/v1/Systems/ComposedSystem")
        .expect("the mockup's composed system");
    let gone = admin
        .delete(&format!("/v1/composed_nodes/{}", mockups.id))
        .await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT, "{}", gone.text);
}

/// The systems the mockup composed are composed nodes of the pod manager; with every compute
/// block taken, no node fits until one is decomposed; then a requirement is met with the freed
/// compute block and unused drive blocks of its zone, the node becomes an available host of kind
/// `composed`, its blocks are composed into its system, and decomposing it frees them.
#[tokio::test]
async fn an_admin_composes_a_node_for_a_requirement_and_decomposes_it() {
    let (_service, server, pm, _folder) = composing_site().await;
    let admin = server.admin();

    let found = nodes(&admin, &pm).await;
    let mockups = found
        .iter()
        .find(|n| n.system_id == "/redfish/v1/Systems/ComposedSystem")
        .unwrap_or_else(|| panic!("the mockup's composed system in {found:#?}"))
        .clone();
    assert_eq!(
        mockups.blocks,
        [
            block("ComputeBlock1"),
            block("DriveBlock3"),
            block("DriveBlock4")
        ]
    );
    assert_eq!(mockups.zone, ZONE_1);
    let host = admin.get(&format!("/v1/hosts/{}", mockups.id)).await;
    assert_eq!(host.view::<HostView>().kind.as_str(), "composed");

    let url = format!("/v1/pod_managers/{pm}/composed_nodes");
    let want = json!({"name": "web-1", "requirement": {"drives": 2}});
    let none = admin.post(&url, want.clone()).await;
    assert_eq!(none.status, StatusCode::CONFLICT, "{}", none.text);
    assert_eq!(none.code(), "no_blocks_fit");
    assert_eq!(none.field(), "requirement");

    let gone = admin
        .delete(&format!("/v1/composed_nodes/{}", mockups.id))
        .await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT, "{}", gone.text);
    assert_eq!(
        admin.get(&format!("/v1/hosts/{}", mockups.id)).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        block_state(&admin, &pm, "ComputeBlock1").await,
        ("Unused".to_owned(), vec![])
    );

    let made = admin.created(&url, want).await.view::<ComposedNodeView>();
    assert_eq!(made.name, "web-1");
    assert_eq!(made.zone, ZONE_1);
    assert_eq!(made.blocks[0], block("ComputeBlock1"));
    assert!(made.blocks.len() >= 2, "{made:#?}");
    for b in &made.blocks {
        let name = b.rsplit('/').next().unwrap();
        let (state, systems) = block_state(&admin, &pm, name).await;
        assert_eq!(systems, std::slice::from_ref(&made.system_id), "{name}");
        // A block that may be shared stays available to further compositions.
        assert!(
            ["Composed", "ComposedAndAvailable"].contains(&state.as_str()),
            "{name}: {state}"
        );
    }
    // Registered and inspected as any host.
    let host = eventually(
        Duration::from_secs(60),
        "the composed node available",
        || {
            let admin = &admin;
            let id = made.id.clone();
            async move {
                let host = admin
                    .get(&format!("/v1/hosts/{id}"))
                    .await
                    .view::<HostView>();
                (host.state.as_str() == "available").then_some(host)
            }
        },
    )
    .await;
    assert_eq!(host.kind.as_str(), "composed");
    assert_eq!(host.name, "web-1");
    let listed = nodes(&admin, &pm).await;
    assert!(listed.iter().any(|n| n.id == made.id), "{listed:#?}");
    // A resync keeps it what it is.
    admin.sync_all(std::slice::from_ref(&pm)).await;
    let again = admin
        .get(&format!("/v1/composed_nodes/{}", made.id))
        .await
        .view::<ComposedNodeView>();
    assert_eq!(again.blocks, made.blocks);

    let gone = admin
        .delete(&format!("/v1/composed_nodes/{}", made.id))
        .await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT, "{}", gone.text);
    for b in &made.blocks {
        let name = b.rsplit('/').next().unwrap();
        assert_eq!(
            block_state(&admin, &pm, name).await,
            ("Unused".to_owned(), vec![]),
            "{name}"
        );
    }
    let missing = admin.get(&format!("/v1/composed_nodes/{}", made.id)).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.text);
}

/// Blocks an admin names are checked against the service's rules before anything is sent: each
/// refusal names `blocks` (or the field at fault) and says why, and nothing is composed.
#[tokio::test]
async fn compositions_outside_the_rules_are_refused_naming_the_field() {
    let (_service, server, pm, _folder) = composing_site().await;
    let admin = server.admin();
    let url = format!("/v1/pod_managers/{pm}/composed_nodes");
    let before = composition(&admin, &pm).await;
    let cases = [
        (
            json!({"name": "n", "blocks": [block("ComputeBlock1")]}),
            StatusCode::CONFLICT,
            "blocks",
            "is composed into /redfish/v1/Systems/ComposedSystem",
        ),
        (
            json!({"name": "n", "blocks": [block("DriveBlock5")]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "blocks",
            "0 Compute blocks",
        ),
        (
            json!({"name": "n", "blocks": [block("Nothing")]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "blocks",
            "no resource block",
        ),
        (
            json!({"name": "n", "blocks": [block("DriveBlock5"), block("DriveBlock5")]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "blocks",
            "twice",
        ),
        (
            json!({"name": "n", "blocks": [block("DriveBlock5"), block("SystemBlock11")]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "blocks",
            "share no resource zone",
        ),
        (
            json!({"name": "n", "blocks": [block("DriveBlock5")], "requirement": {"drives": 1}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "blocks",
            "not both",
        ),
        (
            json!({"name": "n", "requirement": {}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "requirement",
            "at least one",
        ),
        (
            json!({"name": "no spaces", "requirement": {"drives": 1}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "name",
            "characters",
        ),
    ];
    for (body, status, field, words) in cases {
        let reply = admin.post(&url, body.clone()).await;
        assert_eq!(reply.status, status, "{body}: {}", reply.text);
        assert_eq!(reply.field(), field, "{body}: {}", reply.text);
        assert!(reply.message().contains(words), "{body}: {}", reply.text);
    }
    assert_eq!(composition(&admin, &pm).await, before, "nothing composed");
}

/// Two compositions at once for the one compute block free: one node is composed, the other
/// request is refused as nothing fits; the block is composed once. A node a claim holds is
/// not decomposed.
#[tokio::test]
async fn two_compositions_racing_for_one_block_compose_one_node() {
    let (_service, server, pm, _folder) = composing_site().await;
    let admin = server.admin();
    free_the_last_compute_block(&admin, &pm).await;

    let url = format!("/v1/pod_managers/{pm}/composed_nodes");
    let (a, b) = tokio::join!(
        admin.post(&url, json!({"name": "a", "requirement": {"drives": 1}})),
        admin.post(&url, json!({"name": "b", "requirement": {"drives": 1}})),
    );
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::CREATED, StatusCode::CONFLICT],
        "{} / {}",
        a.text,
        b.text
    );
    let (won, lost) = if a.status == StatusCode::CREATED {
        (a, b)
    } else {
        (b, a)
    };
    assert_eq!(lost.code(), "no_blocks_fit", "{}", lost.text);
    let node = won.view::<ComposedNodeView>();
    assert_eq!(
        block_state(&admin, &pm, "ComputeBlock1").await,
        ("Composed".to_owned(), vec![node.system_id.clone()])
    );

    // A claim on the node: it stays until the claim is released.
    let labelled = admin
        .patch(
            &format!("/v1/hosts/{}", node.id),
            json!({"labels": {"composed": "yes"}}),
        )
        .await;
    assert_eq!(labelled.status, StatusCode::OK, "{}", labelled.text);
    let (_, token) = admin.granted_tenant("t", &pm).await;
    let tenant = server.client(Some(&token));
    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let claim = tenant
        .created(
            "/v1/claims",
            json!({"pod_manager": pm, "selector": {"composed": "yes"},
                   "image": {"url": images.url("/os.iso")}, "online": false}),
        )
        .await;
    let claim_id = claim.body["id"].as_str().unwrap().to_owned();
    eventually(Duration::from_secs(60), "the claim bound", || {
        let tenant = &tenant;
        let claim_id = claim_id.clone();
        async move {
            let claim = tenant.get(&format!("/v1/claims/{claim_id}")).await;
            (claim.body["state"] != "pending").then_some(())
        }
    })
    .await;
    let refused = admin
        .delete(&format!("/v1/composed_nodes/{}", node.id))
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
    assert_eq!(refused.code(), "host_claimed");
    assert!(refused.message().contains(&claim_id), "{}", refused.text);
    assert_eq!(
        block_state(&admin, &pm, "ComputeBlock1").await.0,
        "Composed"
    );
}

/// A pod manager whose service composes nothing says so, with a 409 naming the capability,
/// and has no composed nodes.
#[tokio::test]
async fn a_pod_manager_that_composes_nothing_says_so() {
    let bmc = SushyStatic::start(&mockup("public-bladed"))
        .await
        .expect("sushy-static starts");
    let server = TestServer::start().await;
    let admin = server.admin();
    let pm = admin.synced_site(&bmc.url()).await;
    let read = admin
        .get(&format!("/v1/pod_managers/{pm}/composition"))
        .await;
    assert_eq!(read.status, StatusCode::CONFLICT, "{}", read.text);
    assert_eq!(read.code(), "composition_unsupported");
    let compose = admin
        .post(
            &format!("/v1/pod_managers/{pm}/composed_nodes"),
            json!({"name": "n", "requirement": {"cores": 1}}),
        )
        .await;
    assert_eq!(compose.status, StatusCode::CONFLICT, "{}", compose.text);
    assert_eq!(compose.code(), "composition_unsupported");
    assert!(nodes(&admin, &pm).await.is_empty());
    let unknown = podium_types::HostId::generate();
    let reply = admin.delete(&format!("/v1/composed_nodes/{unknown}")).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.text);

    // A claim that composes, which no blade matches, waits and says why.
    let (_, token) = admin.granted_tenant("t", &pm).await;
    let tenant = server.client(Some(&token));
    let claim = tenant
        .created(
            "/v1/claims",
            json!({"pod_manager": pm, "image": {"url": "http://127.0.0.1:9/os.iso"},
                   "online": false, "compose": true, "min_cpu": 4096}),
        )
        .await;
    let id = claim.body["id"].as_str().unwrap().to_owned();
    let reason = eventually(Duration::from_secs(60), "the claim's reason", || {
        let (tenant, id) = (&tenant, id.clone());
        async move {
            let claim = claim_of(tenant, &id).await;
            claim
                .reason
                .filter(|r| r.contains("composes no nodes"))
                .map(|r| (claim.state, r))
        }
    })
    .await;
    // Nothing matches it, and nothing can be composed for it: it fails as any such claim.
    assert_eq!(reason.0.as_str(), "failed", "{}", reason.1);
    assert!(
        reason.1.starts_with("no host of this pod manager matches"),
        "{}",
        reason.1
    );
}

/// A decomposition the service does not answer fails with the reason, and leaves the node as it
/// was: listed, its host out of maintenance (the hold that kept claims off it during the call
/// ends).
#[tokio::test]
async fn a_decomposition_that_fails_leaves_the_node_as_it_was() {
    let (service, server, pm, _folder) = composing_site().await;
    let admin = server.admin();
    let node = nodes(&admin, &pm)
        .await
        .into_iter()
        .find(|n| n.system_id == "/redfish/v1/Systems/ComposedSystem")
        .expect("the mockup's composed system");
    drop(service);
    let failed = admin
        .delete(&format!("/v1/composed_nodes/{}", node.id))
        .await;
    assert_eq!(failed.status, StatusCode::BAD_GATEWAY, "{}", failed.text);
    assert_eq!(failed.code(), "endpoint_unreachable", "{}", failed.text);
    let host = admin
        .get(&format!("/v1/hosts/{}", node.id))
        .await
        .view::<HostView>();
    assert!(host.maintenance.is_none(), "{host:#?}");
    assert!(nodes(&admin, &pm).await.iter().any(|n| n.id == node.id));
}

/// A tenant's claim, as it reads it.
async fn claim_of(tenant: &Client, id: &str) -> ClaimView {
    let reply = tenant.get(&format!("/v1/claims/{id}")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    reply.view()
}

/// Claims that compose: two racing for the one free compute block get one node, composed for
/// the winner and bound by it; the other waits pending, saying why. When the winner is released,
/// its node is decomposed, and the other claim has a node composed of the freed blocks and binds
/// it; released in turn, that node goes too. A claim that composes cannot ask for what a new
/// node has not.
#[tokio::test]
async fn claims_that_compose_race_for_the_last_block_and_hand_it_on_when_released() {
    let (_service, server, pm, _folder) = composing_site().await;
    let admin = server.admin();
    free_the_last_compute_block(&admin, &pm).await;
    let (_, token) = admin.granted_tenant("t", &pm).await;
    let tenant = server.client(Some(&token));
    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let claim = |extra: serde_json::Value| {
        // The mockup's own composed systems report no CPUs: only a node composed for the
        // claim matches it.
        let mut body = json!({"pod_manager": pm, "image": {"url": images.url("/os.iso")},
                              "online": false, "compose": true, "min_cpu": 2,
                              "min_memory_mib": 32768});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };

    let naming_a_nic = json!({"links": [{"id": "eth0", "type": "phy",
                                         "ethernet_mac_address": "52:54:00:aa:00:01"}]});
    for (extra, field) in [
        (json!({"selector": {"rack": "a"}}), "selector"),
        (json!({"chassis": "a-rack"}), "chassis"),
        (json!({"spread": "web"}), "spread"),
        (json!({"network_data": naming_a_nic.clone()}), "NICs"),
    ] {
        let refused = tenant.post("/v1/claims", claim(extra)).await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            refused.text
        );
        assert_eq!(refused.field(), "compose", "{}", refused.text);
        assert!(refused.message().contains(field), "{}", refused.text);
    }

    let (a, b) = tokio::join!(
        tenant.post("/v1/claims", claim(json!({}))),
        tenant.post("/v1/claims", claim(json!({}))),
    );
    let ids: Vec<String> = [a, b]
        .iter()
        .map(|r| {
            assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
            assert_eq!(r.body["compose"], true, "{}", r.text);
            r.body["id"].as_str().unwrap().to_owned()
        })
        .collect();
    // Nor can it be given networkData naming NICs while it waits.
    let patched = tenant
        .patch(
            &format!("/v1/claims/{}", ids[0]),
            json!({"network_data": naming_a_nic}),
        )
        .await;
    assert_eq!(
        patched.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        patched.text
    );
    assert_eq!(patched.field(), "compose", "{}", patched.text);
    let (won, lost) = eventually(
        Duration::from_secs(90),
        "one claim bound to a node composed for it, the other waiting for blocks",
        || {
            let (tenant, ids) = (&tenant, &ids);
            async move {
                let a = claim_of(tenant, &ids[0]).await;
                let b = claim_of(tenant, &ids[1]).await;
                // The other's reason is written when the bind task has tried it since.
                let tried = |c: &ClaimView| {
                    c.reason
                        .as_deref()
                        .is_some_and(|r| r.contains("free resource blocks cannot make a node"))
                };
                match (a.state.as_str(), b.state.as_str()) {
                    ("bound", "pending") if tried(&b) => Some((a, b)),
                    ("pending", "bound") if tried(&a) => Some((b, a)),
                    _ => None,
                }
            }
        },
    )
    .await;
    let reason = lost.reason.clone().unwrap_or_default();
    // Never the service's blocks or systems in a tenant's words.
    assert!(!reason.contains("/redfish/v1"), "{reason}");
    let host = won.host.as_ref().expect("the winner's host").id.clone();
    let node = admin
        .get(&format!("/v1/composed_nodes/{host}"))
        .await
        .view::<ComposedNodeView>();
    assert_eq!(node.claim.as_ref(), Some(&won.id));
    assert_eq!(
        block_state(&admin, &pm, "ComputeBlock1").await,
        ("Composed".to_owned(), vec![node.system_id.clone()])
    );

    // Released, the winner's node is decomposed, and the other claim gets one of the blocks.
    let released = tenant.delete(&format!("/v1/claims/{}", won.id)).await;
    assert_eq!(released.status, StatusCode::ACCEPTED, "{}", released.text);
    let rebound = eventually(
        Duration::from_secs(90),
        "the other claim bound to a node composed for it",
        || {
            let (tenant, id) = (&tenant, lost.id.to_string());
            async move {
                let claim = claim_of(tenant, &id).await;
                (claim.state.as_str() == "bound").then_some(claim)
            }
        },
    )
    .await;
    let old = admin.get(&format!("/v1/composed_nodes/{host}")).await;
    assert_eq!(old.status, StatusCode::NOT_FOUND, "{}", old.text);
    let second = rebound.host.as_ref().expect("its host").id.clone();
    assert_ne!(second, host);
    let node = admin
        .get(&format!("/v1/composed_nodes/{second}"))
        .await
        .view::<ComposedNodeView>();
    assert_eq!(node.claim.as_ref(), Some(&rebound.id));
    let kind = admin.get(&format!("/v1/hosts/{second}")).await;
    assert_eq!(kind.view::<HostView>().kind.as_str(), "composed");

    let released = tenant.delete(&format!("/v1/claims/{}", rebound.id)).await;
    assert_eq!(released.status, StatusCode::ACCEPTED, "{}", released.text);
    eventually(
        Duration::from_secs(90),
        "the second node decomposed",
        || {
            let admin = &admin;
            let second = second.clone();
            async move {
                let reply = admin.get(&format!("/v1/composed_nodes/{second}")).await;
                (reply.status == StatusCode::NOT_FOUND).then_some(())
            }
        },
    )
    .await;
    assert_eq!(
        block_state(&admin, &pm, "ComputeBlock1").await,
        ("Unused".to_owned(), vec![])
    );
    // The mockup's other composed system is all that is left.
    let left = nodes(&admin, &pm).await;
    assert_eq!(left.len(), 1, "{left:#?}");
    assert_eq!(left[0].system_id, "/redfish/v1/Systems/ComposedSystem2");
    assert_eq!(left[0].claim, None);
}

/// Where the composition service offers the `Compose` action (DMTF's `public-compose-action`,
/// served unchanged: its target misspelled, its capabilities naming no zone, a sled listed
/// twice), Podium composes through it and reads the system from the manifest's stanza; the
/// node registers to `available` and decomposes as any.
#[tokio::test]
async fn a_service_with_the_compose_action_composes_through_it() {
    let service = Composition::start(&mockup("public-compose-action"))
        .await
        .expect("the service starts");
    let server = TestServer::start().await;
    let admin = server.admin();
    let pm = admin.synced_site(service.url()).await;
    let read = composition(&admin, &pm).await;
    let sleds: Vec<_> = read
        .blocks
        .iter()
        .filter(|b| b.id == block("SASSled-3"))
        .collect();
    assert_eq!(sleds.len(), 1, "a block listed twice is one block");
    assert_eq!(read.offered_zones.len(), read.zones.len(), "{read:#?}");

    let made = admin
        .created(
            &format!("/v1/pod_managers/{pm}/composed_nodes"),
            json!({"name": "rack-4", "blocks": [block("RackServer-4")]}),
        )
        .await
        .view::<ComposedNodeView>();
    assert_eq!(service.compose_actions(), 1);
    let system = service
        .resource(&made.system_id)
        .unwrap_or_else(|| panic!("{} served", made.system_id));
    assert_eq!(system["Name"], "rack-4");
    // The mockup links the block to the rack server it stands for already, unused.
    let (state, systems) = block_state(&admin, &pm, "RackServer-4").await;
    assert_eq!(state, "Composed");
    assert!(systems.contains(&made.system_id), "{systems:?}");
    eventually(Duration::from_secs(60), "the node available", || {
        let admin = &admin;
        let id = made.id.clone();
        async move {
            let host = admin
                .get(&format!("/v1/hosts/{id}"))
                .await
                .view::<HostView>();
            (host.state.as_str() == "available").then_some(())
        }
    })
    .await;
    let gone = admin
        .delete(&format!("/v1/composed_nodes/{}", made.id))
        .await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT, "{}", gone.text);
    let (state, systems) = block_state(&admin, &pm, "RackServer-4").await;
    assert_eq!(state, "Unused");
    assert!(!systems.contains(&made.system_id), "{systems:?}");
}

/// The BMC's own view of a resource, read through the pod manager's service.
async fn bmc_view(service: &Composition, path: &str) -> serde_json::Value {
    reqwest::get(format!("{}{path}", service.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Runs an admin's host action and waits until its operation succeeded.
async fn act(admin: &Client, host: &str, action: &str, body: serde_json::Value) {
    let reply = admin
        .post(&format!("/v1/hosts/{host}/{action}"), body)
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text);
    let id = reply.body["id"].as_str().unwrap().to_owned();
    eventually(Duration::from_secs(60), "the operation done", || {
        let (admin, id) = (admin, id.clone());
        async move {
            let op = admin.get(&format!("/v1/operations/{id}")).await.body;
            match op["status"].as_str() {
                Some("succeeded") => Some(()),
                Some("failed") => panic!("{action} failed: {op}"),
                _ => None,
            }
        }
    })
    .await;
}

/// Where sushy-tools' systems stand beside composed ones (one pod manager, one Redfish service
/// with both), power, boot and virtual media work the same on each: the BMC's own view of each
/// changes as the admin asked.
#[tokio::test]
async fn sushy_tools_systems_and_composed_nodes_at_one_pod_manager_work_alike() {
    let sushy = Sushy::start(SushyConfig::with_systems(1))
        .await
        .expect("sushy-tools starts");
    let folder = composable();
    let service = Composition::start_beside(folder.path(), &sushy.url())
        .await
        .expect("the service starts");
    let server = TestServer::start().await;
    let admin = server.admin();
    let pm = admin.synced_site(service.url()).await;
    free_the_last_compute_block(&admin, &pm).await;
    let node = admin
        .created(
            &format!("/v1/pod_managers/{pm}/composed_nodes"),
            json!({"name": "web-1", "requirement": {"drives": 1}}),
        )
        .await
        .view::<ComposedNodeView>();
    let emulated = format!("/redfish/v1/Systems/{}", FakeSystem::numbered(1).uuid);
    let hosts = eventually(
        Duration::from_secs(60),
        "sushy-tools' system and the node available",
        || {
            let (admin, pm, emulated, node) = (&admin, &pm, &emulated, &node);
            async move {
                let hosts = admin.hosts_all(&format!("&pod_manager={pm}")).await;
                let find = |system: &str| {
                    hosts
                        .iter()
                        .find(|h| h.system_id == system && h.state.as_str() == "available")
                        .cloned()
                };
                Some((find(emulated)?, find(&node.system_id)?))
            }
        },
    )
    .await;
    assert_eq!(hosts.0.kind.as_str(), "system");
    assert_eq!(hosts.1.kind.as_str(), "composed");

    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let image = images.url("/boot.iso");
    for host in [&hosts.0, &hosts.1] {
        let (id, system) = (host.id.to_string(), host.system_id.clone());
        act(&admin, &id, "power", json!({"action": "on"})).await;
        assert_eq!(
            bmc_view(&service, &system).await["PowerState"],
            "On",
            "{system}"
        );

        act(
            &admin,
            &id,
            "boot",
            json!({"target": "pxe", "persistence": "continuous"}),
        )
        .await;
        let boot = bmc_view(&service, &system).await["Boot"].clone();
        assert_eq!(boot["BootSourceOverrideTarget"], "Pxe", "{system}: {boot}");
        assert_eq!(
            boot["BootSourceOverrideEnabled"], "Continuous",
            "{system}: {boot}"
        );

        act(
            &admin,
            &id,
            "media",
            json!({"action": "insert", "image_url": image}),
        )
        .await;
        let cd = format!("{system}/VirtualMedia/Cd");
        let slot = bmc_view(&service, &cd).await;
        assert_eq!(slot["Inserted"], true, "{system}: {slot}");
        assert_eq!(slot["Image"], image.as_str(), "{system}: {slot}");
        act(&admin, &id, "media", json!({"action": "eject"})).await;
        assert_eq!(bmc_view(&service, &cd).await["Inserted"], false, "{system}");

        act(&admin, &id, "power", json!({"action": "force_off"})).await;
        assert_eq!(
            bmc_view(&service, &system).await["PowerState"],
            "Off",
            "{system}"
        );
    }
}

/// Claims that compose waiting for blocks cost the service one read a bind run, not one each:
/// with every compute block composed, three such claims wait saying why, and a run of the bind
/// task reads the service's blocks once.
#[tokio::test]
async fn claims_waiting_for_blocks_read_the_service_once_a_run() {
    let (service, server, pm, _folder) = composing_site().await;
    let admin = server.admin();
    let (_, token) = admin.granted_tenant("t", &pm).await;
    let tenant = server.client(Some(&token));
    let images = podium_tests::ImageServer::start(vec![0x42; 4096]).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let claim = tenant
            .created(
                "/v1/claims",
                json!({"pod_manager": pm, "image": {"url": images.url("/os.iso")},
                       "online": false, "compose": true, "min_cpu": 2}),
            )
            .await;
        ids.push(claim.body["id"].as_str().unwrap().to_owned());
    }
    let waiting = |tenant: &Client, ids: &[String]| {
        let (tenant, ids) = (tenant.clone(), ids.to_vec());
        async move {
            for id in &ids {
                let claim = claim_of(&tenant, id).await;
                let reason = claim.reason.unwrap_or_default();
                if claim.state.as_str() != "pending"
                    || !reason.contains("free resource blocks cannot make a node")
                {
                    return None;
                }
            }
            Some(())
        }
    };
    eventually(
        Duration::from_secs(60),
        "three claims waiting for blocks",
        || waiting(&tenant, &ids),
    )
    .await;
    let runs = |admin: &Client| {
        let admin = admin.clone();
        async move {
            let tasks = admin.get("/v1/admin/tasks").await.body;
            let bind = tasks["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == "bind")
                .cloned()
                .unwrap();
            (bind["runs"].as_u64().unwrap(), bind["running"] == true)
        }
    };
    // Settled: no run under way.
    let before_runs = eventually(Duration::from_secs(30), "the bind task idle", || {
        let admin = &admin;
        async move {
            let (n, running) = runs(admin).await;
            (!running).then_some(n)
        }
    })
    .await;
    let blocks = "/redfish/v1/CompositionService/ResourceBlocks";
    let before = service.reads(blocks);
    let ran = admin.post("/v1/admin/tasks/bind/run", json!({})).await;
    assert_eq!(ran.status, StatusCode::ACCEPTED, "{}", ran.text);
    eventually(Duration::from_secs(30), "one more bind run done", || {
        let admin = &admin;
        async move {
            let (n, running) = runs(admin).await;
            (n > before_runs && !running).then_some(())
        }
    })
    .await;
    assert_eq!(
        service.reads(blocks) - before,
        1,
        "one read of the blocks for three claims"
    );
    eventually(
        Duration::from_secs(5),
        "the claims still waiting, saying why",
        || waiting(&tenant, &ids),
    )
    .await;
}
