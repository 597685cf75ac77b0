//! The composition service the tests of composed nodes run against
//! (`podium_tests::composition`), checked on its own: against DMTF's mockup it starts from, and
//! through OpenStack `sushy`'s readers of resource blocks and zones, a client nobody here wrote.

use std::collections::BTreeSet;
use std::path::Path;

use podium_tests::composition::{Composition, mockup};
use podium_tests::sushy::run_peer_script;
use reqwest::StatusCode;
use serde_json::{Value, json};

const MOCKUP: &str = "public-composability";
const BLOCKS: &str = "/redfish/v1/CompositionService/ResourceBlocks";

async fn start() -> (Composition, reqwest::Client) {
    let service = Composition::start(&mockup(MOCKUP))
        .await
        .expect("the service starts");
    (service, reqwest::Client::new())
}

/// The mockup's own file for the resource at `path` (`/redfish/v1/...`).
fn file(path: &str) -> Value {
    let relative = path.strip_prefix("/redfish/v1").expect("a Redfish path");
    let file = mockup(MOCKUP)
        .join(relative.trim_start_matches('/'))
        .join("index.json");
    serde_json::from_str(&std::fs::read_to_string(&file).expect("the mockup has it"))
        .expect("the mockup's JSON")
}

async fn get(client: &reqwest::Client, service: &Composition, path: &str) -> (StatusCode, Value) {
    let answer = client
        .get(format!("{}{path}", service.url()))
        .send()
        .await
        .expect("the service answers");
    let status = answer.status();
    (status, answer.json().await.unwrap_or(Value::Null))
}

async fn compose(
    client: &reqwest::Client,
    service: &Composition,
    body: &Value,
) -> (StatusCode, Option<String>, Value) {
    let answer = client
        .post(format!("{}/redfish/v1/Systems", service.url()))
        .json(body)
        .send()
        .await
        .expect("the service answers");
    let status = answer.status();
    let location = answer
        .headers()
        .get("location")
        .map(|l| l.to_str().expect("an ASCII location").to_owned());
    (status, location, answer.json().await.unwrap_or(Value::Null))
}

async fn delete(client: &reqwest::Client, service: &Composition, path: &str) -> StatusCode {
    client
        .delete(format!("{}{path}", service.url()))
        .send()
        .await
        .expect("the service answers")
        .status()
}

fn block(name: &str) -> Value {
    json!({"@odata.id": format!("{BLOCKS}/{name}")})
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list of links")
        .iter()
        .map(|l| l["@odata.id"].as_str().expect("a link").to_owned())
        .collect()
}

/// A block's composition state, its count of compositions and the systems it links.
async fn block_state(
    client: &reqwest::Client,
    service: &Composition,
    name: &str,
) -> (String, u64, Vec<String>) {
    let (status, block) = get(client, service, &format!("{BLOCKS}/{name}")).await;
    assert_eq!(status, StatusCode::OK, "{name}: {block}");
    let composition = &block["CompositionStatus"];
    (
        composition["CompositionState"]
            .as_str()
            .expect("a state")
            .to_owned(),
        composition["NumberOfCompositions"]
            .as_u64()
            .expect("a count"),
        block["Links"]["ComputerSystems"]
            .as_array()
            .map(|_| ids(&block["Links"]["ComputerSystems"]))
            .unwrap_or_default(),
    )
}

/// The members of the collection at `path`.
async fn members(client: &reqwest::Client, service: &Composition, path: &str) -> Vec<String> {
    let (status, collection) = get(client, service, path).await;
    assert_eq!(status, StatusCode::OK, "{path}: {collection}");
    let members = ids(&collection["Members"]);
    assert_eq!(
        collection["Members@odata.count"],
        json!(members.len()),
        "{path} counts its members"
    );
    members
}

/// The drives of every storage of the system at `path`.
async fn drives(client: &reqwest::Client, service: &Composition, path: &str) -> BTreeSet<String> {
    let mut drives = BTreeSet::new();
    for storage in members(client, service, &format!("{path}/Storage")).await {
        let (_, storage) = get(client, service, &storage).await;
        drives.extend(ids(&storage["Drives"]));
    }
    drives
}

fn every_resource(folder: &Path) -> Vec<String> {
    let mut paths = Vec::new();
    for entry in walkdir(folder) {
        let relative = entry
            .parent()
            .and_then(|d| d.strip_prefix(folder).ok())
            .expect("under the mockup")
            .to_string_lossy()
            .into_owned();
        paths.push(if relative.is_empty() {
            "/redfish/v1".to_owned()
        } else {
            format!("/redfish/v1/{relative}")
        });
    }
    paths
}

fn walkdir(folder: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![folder.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a mockup folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "index.json") {
                found.push(path);
            }
        }
    }
    found
}

#[tokio::test]
async fn it_serves_every_resource_of_the_mockup_as_the_mockup_has_it() {
    let (service, client) = start().await;
    let paths = every_resource(&mockup(MOCKUP));
    assert!(paths.len() > 100, "{} resources", paths.len());
    for path in paths {
        let (status, served) = get(&client, &service, &path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        let mut expected = file(&path);
        // The one change: a collection's count is its members' (the mockup's Systems says 2
        // and lists 5).
        if let Some(n) = expected["Members"].as_array().map(Vec::len) {
            expected["Members@odata.count"] = json!(n);
        }
        assert_eq!(served, expected, "{path}");
    }
    let (status, error) = get(&client, &service, "/redfish/v1/Nothing").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        error["error"]["code"], "Base.1.19.ResourceMissingAtURI",
        "{error}"
    );
}

#[tokio::test]
async fn a_system_composed_again_from_the_mockups_blocks_matches_the_mockups_composed_system() {
    let (service, client) = start().await;
    let original = "/redfish/v1/Systems/ComposedSystem";
    let mockup_system = file(original);

    // Decomposing frees what only it held; a block shared with ComposedSystem2 stays composed.
    assert_eq!(
        delete(&client, &service, original).await,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        get(&client, &service, original).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(&client, &service, &format!("{original}/Processors"))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    let systems = members(&client, &service, "/redfish/v1/Systems").await;
    assert!(!systems.contains(&original.to_owned()), "{systems:?}");
    assert_eq!(
        block_state(&client, &service, "ComputeBlock1").await,
        ("Unused".to_owned(), 0, vec![])
    );
    assert_eq!(
        block_state(&client, &service, "DriveBlock3").await,
        (
            "ComposedAndAvailable".to_owned(),
            1,
            vec!["/redfish/v1/Systems/ComposedSystem2".to_owned()]
        )
    );
    assert_eq!(
        block_state(&client, &service, "DriveBlock4").await,
        ("Unused".to_owned(), 0, vec![])
    );

    // The same blocks again.
    let (status, location, system) = compose(
        &client,
        &service,
        &json!({
            "Name": "Composed again",
            "Links": {"ResourceBlocks": mockup_system["Links"]["ResourceBlocks"]},
        }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{system}");
    let location = location.expect("a Location");
    assert_eq!(system["@odata.id"], json!(location));
    assert_eq!(get(&client, &service, &location).await.1, system);
    assert!(
        members(&client, &service, "/redfish/v1/Systems")
            .await
            .contains(&location)
    );
    // What both say: the kind, the blocks, and the resources each collection links.
    assert_eq!(system["Name"], "Composed again");
    assert_eq!(system["SystemType"], mockup_system["SystemType"]);
    assert_eq!(
        system["Links"]["ResourceBlocks"],
        mockup_system["Links"]["ResourceBlocks"]
    );
    for collection in ["Processors", "Memory", "EthernetInterfaces"] {
        assert_eq!(
            members(&client, &service, &format!("{location}/{collection}")).await,
            ids(&file(&format!("{original}/{collection}"))["Members"]),
            "{collection}"
        );
    }
    let mockup_drives: BTreeSet<String> = ids(&file(&format!("{original}/Storage/NVMe"))["Drives"])
        .into_iter()
        .collect();
    assert_eq!(drives(&client, &service, &location).await, mockup_drives);
    assert_eq!(
        system["Boot"]["BootSourceOverrideTarget@Redfish.AllowableValues"],
        mockup_system["Boot"]["BootSourceOverrideTarget@Redfish.AllowableValues"]
    );

    // Each block counts it and links it.
    assert_eq!(
        block_state(&client, &service, "ComputeBlock1").await,
        ("Composed".to_owned(), 1, vec![location.clone()])
    );
    assert_eq!(
        block_state(&client, &service, "DriveBlock3").await,
        (
            "ComposedAndAvailable".to_owned(),
            2,
            vec![
                "/redfish/v1/Systems/ComposedSystem2".to_owned(),
                location.clone()
            ]
        )
    );
    assert_eq!(
        block_state(&client, &service, "DriveBlock4").await,
        ("ComposedAndAvailable".to_owned(), 1, vec![location.clone()])
    );

    // Powered and booted as a BMC's system is.
    assert_eq!(system["PowerState"], "Off");
    let reset = client
        .post(format!(
            "{}{location}/Actions/ComputerSystem.Reset",
            service.url()
        ))
        .json(&json!({"ResetType": "On"}))
        .send()
        .await
        .expect("the service answers");
    assert_eq!(reset.status(), StatusCode::NO_CONTENT);
    let boot = client
        .patch(format!("{}{location}", service.url()))
        .json(&json!({"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}}))
        .send()
        .await
        .expect("the service answers");
    assert_eq!(boot.status(), StatusCode::OK);
    let (_, now) = get(&client, &service, &location).await;
    assert_eq!(now["PowerState"], "On");
    assert_eq!(now["Boot"]["BootSourceOverrideTarget"], "Pxe");
    assert_eq!(now["Boot"]["BootSourceOverrideEnabled"], "Once");
    let refused = client
        .patch(format!("{}{location}", service.url()))
        .json(&json!({"Boot": {"BootSourceOverrideTarget": "Cd"}}))
        .send()
        .await
        .expect("the service answers");
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);

    // And freed again.
    assert_eq!(
        delete(&client, &service, &location).await,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        block_state(&client, &service, "ComputeBlock1").await,
        ("Unused".to_owned(), 0, vec![])
    );
    assert_eq!(
        block_state(&client, &service, "DriveBlock4").await,
        ("Unused".to_owned(), 0, vec![])
    );
}

#[tokio::test]
async fn compositions_outside_the_rules_are_refused_naming_why_and_change_nothing() {
    let (service, client) = start().await;
    // ComputeBlock1 is free from here on; ComputeBlock2 stays composed.
    assert_eq!(
        delete(&client, &service, "/redfish/v1/Systems/ComposedSystem").await,
        StatusCode::NO_CONTENT
    );
    let snapshot = |service: &Composition| {
        let mut all = vec![service.resource("/redfish/v1/Systems")];
        for member in ids(&file(BLOCKS)["Members"]) {
            all.push(service.resource(&member));
        }
        all
    };
    let before = snapshot(&service);
    let named = |blocks: &[&str]| json!({"Name": "refused", "Links": {"ResourceBlocks": blocks.iter().map(|b| block(b)).collect::<Vec<_>>()}});
    let cases: Vec<(&str, Value, StatusCode, &str, &str)> = vec![
        (
            "a composed block",
            named(&["ComputeBlock2", "DriveBlock5"]),
            StatusCode::CONFLICT,
            "ResourceInUse",
            "#/Links/ResourceBlocks/0",
        ),
        (
            "no compute block (MinCompute 1)",
            named(&["DriveBlock5"]),
            StatusCode::BAD_REQUEST,
            "PropertyValueOutOfRange",
            "#/Links/ResourceBlocks",
        ),
        (
            "blocks in no one zone",
            named(&["ComputeBlock1", "OffloadBlock9"]),
            StatusCode::BAD_REQUEST,
            "PropertyValueConflict",
            "#/Links/ResourceBlocks",
        ),
        (
            "a zone not offered for composition",
            named(&["SystemBlock11"]),
            StatusCode::BAD_REQUEST,
            "PropertyValueConflict",
            "#/Links/ResourceBlocks",
        ),
        (
            "a block named twice",
            named(&["ComputeBlock1", "DriveBlock5", "DriveBlock5"]),
            StatusCode::BAD_REQUEST,
            "PropertyValueConflict",
            "#/Links/ResourceBlocks/2",
        ),
        (
            "a block that does not exist",
            named(&["ComputeBlock1", "DriveBlock99"]),
            StatusCode::BAD_REQUEST,
            "ResourceMissingAtURI",
            "#/Links/ResourceBlocks/1",
        ),
        (
            "no name",
            json!({"Links": {"ResourceBlocks": [block("ComputeBlock1")]}}),
            StatusCode::BAD_REQUEST,
            "PropertyMissing",
            "#/Name",
        ),
        (
            "no blocks",
            json!({"Name": "refused", "Links": {"ResourceBlocks": []}}),
            StatusCode::BAD_REQUEST,
            "PropertyMissing",
            "#/Links/ResourceBlocks",
        ),
        (
            "a property a create cannot set",
            json!({"Name": "refused", "PowerState": "On", "Links": {"ResourceBlocks": [block("ComputeBlock1")]}}),
            StatusCode::BAD_REQUEST,
            "PropertyNotWritable",
            "#/PowerState",
        ),
        (
            "a boot target the capabilities do not allow",
            json!({"Name": "refused", "Boot": {"BootSourceOverrideTarget": "Cd"}, "Links": {"ResourceBlocks": [block("ComputeBlock1")]}}),
            StatusCode::BAD_REQUEST,
            "PropertyValueNotInList",
            "#/Boot/BootSourceOverrideTarget",
        ),
        (
            "not an object",
            json!(["ComputeBlock1"]),
            StatusCode::BAD_REQUEST,
            "MalformedJSON",
            "",
        ),
    ];
    for (what, body, status, id, related) in cases {
        let (got, location, error) = compose(&client, &service, &body).await;
        assert_eq!(got, status, "{what}: {error}");
        assert_eq!(location, None, "{what}");
        assert_eq!(
            error["error"]["code"],
            json!(format!("Base.1.19.{id}")),
            "{what}: {error}"
        );
        let info = &error["error"]["@Message.ExtendedInfo"][0];
        assert!(
            !info["Message"].as_str().unwrap_or("").is_empty(),
            "{what}: {error}"
        );
        if !related.is_empty() {
            assert_eq!(
                info["RelatedProperties"],
                json!([related]),
                "{what}: {error}"
            );
        }
    }
    let message = |error: &Value| error["error"]["message"].as_str().unwrap_or("").to_owned();
    let (_, _, in_use) = compose(&client, &service, &named(&["ComputeBlock2"])).await;
    assert!(message(&in_use).contains("ComputeBlock2"), "{in_use}");
    let (_, _, limit) = compose(&client, &service, &named(&["DriveBlock5"])).await;
    assert!(message(&limit).contains("MinCompute"), "{limit}");

    let not_json = client
        .post(format!("{}/redfish/v1/Systems", service.url()))
        .header("content-type", "application/json")
        .body("{")
        .send()
        .await
        .expect("the service answers");
    assert_eq!(not_json.status(), StatusCode::BAD_REQUEST);
    // Only a composed system can be deleted.
    assert_eq!(
        delete(
            &client,
            &service,
            "/redfish/v1/Systems/SystemPreResourceBlock"
        )
        .await,
        StatusCode::METHOD_NOT_ALLOWED
    );
    assert_eq!(
        delete(&client, &service, &format!("{BLOCKS}/ComputeBlock1")).await,
        StatusCode::METHOD_NOT_ALLOWED
    );
    assert_eq!(snapshot(&service), before, "a refusal changes nothing");
}

#[tokio::test]
async fn two_compositions_racing_for_one_block_never_both_get_it() {
    let (service, client) = start().await;
    assert_eq!(
        delete(&client, &service, "/redfish/v1/Systems/ComposedSystem").await,
        StatusCode::NO_CONTENT
    );
    for round in 0..10 {
        let body = |drive: &str| json!({"Name": format!("racer {round}"), "Links": {"ResourceBlocks": [block("ComputeBlock1"), block(drive)]}});
        let (five, six) = (body("DriveBlock5"), body("DriveBlock6"));
        let (one, two) = tokio::join!(
            compose(&client, &service, &five),
            compose(&client, &service, &six)
        );
        let mut statuses = [one.0, two.0];
        statuses.sort();
        assert_eq!(
            statuses,
            [StatusCode::CREATED, StatusCode::CONFLICT],
            "round {round}"
        );
        let (winner, loser) = if one.0 == StatusCode::CREATED {
            (one, two)
        } else {
            (two, one)
        };
        assert!(
            loser.2["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("ComputeBlock1")),
            "{}",
            loser.2
        );
        let location = winner.1.expect("a Location");
        assert_eq!(
            block_state(&client, &service, "ComputeBlock1").await,
            ("Composed".to_owned(), 1, vec![location.clone()])
        );
        assert_eq!(
            delete(&client, &service, &location).await,
            StatusCode::NO_CONTENT
        );
    }
}

#[tokio::test]
async fn sushy_reads_the_blocks_and_zones_as_the_mockup_has_them_and_as_composing_changes_them() {
    let (service, client) = start().await;
    let seen: Value = serde_json::from_str(
        &run_peer_script("composition_sushy.py", &[service.url()])
            .await
            .expect("sushy reads the service"),
    )
    .expect("the script prints JSON");
    assert_eq!(seen["service"]["enabled"], true, "{seen}");
    let blocks = ids(&file(BLOCKS)["Members"]);
    assert_eq!(blocks.len(), 12);
    assert_eq!(
        seen["blocks"].as_object().map(|b| b.len()),
        Some(12),
        "{seen}"
    );
    for path in &blocks {
        let expected = file(path);
        let name = expected["Id"].as_str().expect("an Id");
        let composition = &expected["CompositionStatus"];
        let got = &seen["blocks"][name];
        assert_eq!(got["name"], expected["Name"], "{name}: {got}");
        assert_eq!(
            got["state"], composition["CompositionState"],
            "{name}: {got}"
        );
        assert_eq!(
            got["compositions"], composition["NumberOfCompositions"],
            "{name}: {got}"
        );
        assert_eq!(
            got["max_compositions"], composition["MaxCompositions"],
            "{name}: {got}"
        );
        assert_eq!(got["reserved"], composition["Reserved"], "{name}: {got}");
        assert_eq!(got["health"], expected["Status"]["Health"], "{name}: {got}");
    }
    let zones = ids(&file("/redfish/v1/CompositionService/ResourceZones")["Members"]);
    assert_eq!(zones.len(), 3);
    assert_eq!(
        seen["zones"].as_object().map(|z| z.len()),
        Some(3),
        "{seen}"
    );
    for path in &zones {
        let expected = file(path);
        let mut links = ids(&expected["Links"]["ResourceBlocks"]);
        links.sort();
        assert_eq!(
            seen["zones"][expected["Id"].as_str().expect("an Id")],
            json!(links),
            "{path}"
        );
    }

    // After a decomposition and a composition, sushy reads the new states.
    assert_eq!(
        delete(&client, &service, "/redfish/v1/Systems/ComposedSystem").await,
        StatusCode::NO_CONTENT
    );
    let (status, _, system) = compose(
        &client,
        &service,
        &json!({"Name": "new", "Links": {"ResourceBlocks": [block("ComputeBlock1"), block("DriveBlock5")]}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{system}");
    let seen: Value = serde_json::from_str(
        &run_peer_script("composition_sushy.py", &[service.url()])
            .await
            .expect("sushy reads the service"),
    )
    .expect("the script prints JSON");
    let state = |name: &str| {
        (
            seen["blocks"][name]["state"].clone(),
            seen["blocks"][name]["compositions"].clone(),
        )
    };
    assert_eq!(state("ComputeBlock1"), (json!("Composed"), json!(1)));
    assert_eq!(
        state("DriveBlock5"),
        (json!("ComposedAndAvailable"), json!(1))
    );
    assert_eq!(state("DriveBlock4"), (json!("Unused"), json!(0)));
    assert_eq!(
        state("DriveBlock3"),
        (json!("ComposedAndAvailable"), json!(1))
    );
}

/// Podium's Redfish driver, as the host calls it, against the composition service.
mod driver {
    use super::*;
    use podium_runtime::{
        BlockType, CallContext, CallError, CompositionState, Credentials, Endpoint, PluginError,
        TlsPolicy,
    };
    use podium_tests::TestServer;
    use podium_types::Secret;

    fn context(service: &Composition) -> CallContext {
        CallContext {
            config: "{}".into(),
            endpoint: Some(Endpoint {
                base: service.url().parse().unwrap(),
                credentials: Some(Credentials {
                    username: "admin".into(),
                    password: Secret::new("unused"),
                }),
                pod_manager: None,
                parallel_requests: None,
                tls: TlsPolicy::System,
            }),
            allocations: None,
        }
    }

    /// A sum over the mockup's files of a block's parts of one kind.
    fn parts(block: &Value, kind: &str, field: &str) -> u64 {
        block[kind]
            .as_array()
            .into_iter()
            .flatten()
            .map(|l| {
                file(l["@odata.id"].as_str().expect("a link"))[field]
                    .as_u64()
                    .unwrap_or(0)
            })
            .sum()
    }

    #[tokio::test]
    async fn it_reads_every_block_zone_and_limit_as_the_mockup_has_them() {
        let (service, _) = start().await;
        let server = TestServer::start().await;
        let plugin = server.bundled_driver("redfish").await;
        let read = server
            .podium
            .runtime()
            .driver(&plugin, context(&service))
            .read_composition()
            .await
            .expect("the composition service");

        let zones = ids(&file("/redfish/v1/CompositionService/ResourceZones")["Members"]);
        assert_eq!(
            read.zones.iter().map(|z| z.id.clone()).collect::<Vec<_>>(),
            zones
        );
        for zone in &read.zones {
            assert_eq!(zone.name, file(&zone.id)["Name"]);
        }
        let blocks = ids(&file(BLOCKS)["Members"]);
        assert_eq!(read.blocks.len(), blocks.len());
        for (block, path) in read.blocks.iter().zip(&blocks) {
            let expected = file(path);
            let status = &expected["CompositionStatus"];
            assert_eq!(&block.id, path);
            assert_eq!(block.name, expected["Name"], "{path}");
            assert_eq!(
                block.state.as_str(),
                status["CompositionState"].as_str().unwrap(),
                "{path}"
            );
            assert_eq!(block.reserved, status["Reserved"] == true, "{path}");
            assert_eq!(
                u64::from(block.compositions),
                status["NumberOfCompositions"].as_u64().unwrap()
            );
            assert_eq!(
                u64::from(block.max_compositions),
                status["MaxCompositions"].as_u64().unwrap()
            );
            assert_eq!(block.zones, ids(&expected["Links"]["Zones"]), "{path}");
            let systems = if expected["Links"]["ComputerSystems"].is_array() {
                ids(&expected["Links"]["ComputerSystems"])
            } else {
                Vec::new()
            };
            assert_eq!(block.systems, systems, "{path}");
            let count = |kind: &str| expected[kind].as_array().map_or(0, Vec::len) as u32;
            assert_eq!(block.processors, count("Processors"), "{path}");
            assert_eq!(block.drives, count("Drives"), "{path}");
            assert_eq!(block.nics, count("EthernetInterfaces"), "{path}");
            assert_eq!(
                u64::from(block.cores),
                parts(&expected, "Processors", "TotalCores")
            );
            assert_eq!(block.memory_mib, parts(&expected, "Memory", "CapacityMiB"));
            assert_eq!(
                block.drive_bytes,
                parts(&expected, "Drives", "CapacityBytes")
            );
        }
        let compute = &read.blocks[0];
        assert_eq!(
            compute.block_types,
            [BlockType::Compute, BlockType::Network]
        );
        assert!(compute.cores > 0 && compute.memory_mib > 0, "{compute:?}");
        assert!(read.blocks.iter().any(|b| b.drive_bytes > 0));
        // Offered for composition: the zones the Systems collection's capabilities name.
        assert_eq!(
            read.offered_zones,
            [
                "/redfish/v1/CompositionService/ResourceZones/1",
                "/redfish/v1/CompositionService/ResourceZones/2"
            ]
        );
        let limits: Vec<_> = read
            .limits
            .iter()
            .map(|l| (l.block_type, l.min, l.max))
            .collect();
        assert!(
            limits.contains(&(BlockType::Compute, Some(1), Some(1))),
            "{limits:?}"
        );
        assert!(
            limits.contains(&(BlockType::Storage, None, Some(8))),
            "{limits:?}"
        );
        assert_eq!(limits.len(), 2, "{limits:?}");
    }

    #[tokio::test]
    async fn it_decomposes_and_composes_and_the_service_refuses_what_its_rules_refuse() {
        let (service, client) = start().await;
        let server = TestServer::start().await;
        let plugin = server.bundled_driver("redfish").await;
        let runtime = server.podium.runtime();
        let driver = || runtime.driver(&plugin, context(&service));

        driver()
            .decompose("/redfish/v1/Systems/ComposedSystem")
            .await
            .expect("decomposed");
        assert_eq!(
            block_state(&client, &service, "ComputeBlock1").await,
            ("Unused".to_owned(), 0, vec![])
        );
        let blocks = [
            format!("{BLOCKS}/ComputeBlock1"),
            format!("{BLOCKS}/DriveBlock5"),
        ];
        let id = driver().compose("web-1", &blocks).await.expect("composed");
        assert_eq!(id, "/redfish/v1/Systems/Composed1");
        let system = service.resource(&id).expect("the service has it");
        assert_eq!(system["Name"], "web-1");
        assert_eq!(
            system["Links"]["ResourceBlocks"],
            json!(
                blocks
                    .iter()
                    .map(|b| json!({"@odata.id": b}))
                    .collect::<Vec<_>>()
            )
        );
        // Read back by the driver as any system: the compute block's NIC is its NIC.
        let inspected = driver().inspect(&id).await.expect("inspected");
        assert_eq!(inspected.name, "web-1");
        let macs: Vec<_> = inspected.nics.iter().map(|n| n.mac.as_str()).collect();
        assert_eq!(macs, ["aa:bb:cc:dd:ee:fd"]);
        let read = driver().read_composition().await.unwrap();
        let compute = read.blocks.iter().find(|b| b.id == blocks[0]).unwrap();
        assert_eq!(compute.state, CompositionState::Composed);
        assert_eq!(compute.systems, [id.as_str()]);

        // The block is taken: a conflict naming it, and nothing composed.
        let taken = driver()
            .compose(
                "web-2",
                &[blocks[0].clone(), format!("{BLOCKS}/DriveBlock6")],
            )
            .await
            .expect_err("the compute block is taken");
        match &taken {
            CallError::Plugin {
                error: PluginError::Conflict(message),
                ..
            } => {
                assert!(message.contains("ComputeBlock1"), "{message}")
            }
            other => panic!("{other}"),
        }
        assert!(service.resource("/redfish/v1/Systems/Composed2").is_none());
        // Outside the limits: invalid input, in the service's words.
        let refused = driver()
            .compose("storage-only", &[format!("{BLOCKS}/DriveBlock6")])
            .await
            .expect_err("no compute block");
        assert!(
            matches!(&refused, CallError::Plugin { error: PluginError::InvalidInput(m), .. } if m.contains("MinCompute")),
            "{refused}"
        );

        driver().decompose(&id).await.expect("decomposed");
        assert_eq!(
            block_state(&client, &service, "ComputeBlock1").await,
            ("Unused".to_owned(), 0, vec![])
        );
        let gone = driver().decompose(&id).await.expect_err("gone");
        assert!(
            matches!(
                &gone,
                CallError::Plugin {
                    error: PluginError::NotFound(_),
                    ..
                }
            ),
            "{gone}"
        );
        let physical = driver()
            .decompose("/redfish/v1/Systems/SystemPreResourceBlock")
            .await
            .expect_err("not composed");
        assert!(
            matches!(
                &physical,
                CallError::Plugin {
                    error: PluginError::Unsupported(_),
                    ..
                }
            ),
            "{physical}"
        );
    }

    /// A service without a `CompositionService` (DMTF's blade enclosure, served by sushy-static):
    /// the driver says so, and the host passes it on.
    #[tokio::test]
    async fn a_service_without_composition_is_unsupported() {
        let server = TestServer::start().await;
        let plugin = server.bundled_driver("redfish").await;
        let folder = mockup("public-bladed");
        let bmc = podium_tests::sushy::SushyStatic::start(&folder)
            .await
            .expect("sushy-static starts");
        let mut ctx = CallContext {
            config: "{}".into(),
            ..Default::default()
        };
        ctx.endpoint = Some(Endpoint {
            base: bmc.url().parse().unwrap(),
            credentials: None,
            pod_manager: None,
            parallel_requests: None,
            tls: TlsPolicy::System,
        });
        let refused = server
            .podium
            .runtime()
            .driver(&plugin, ctx)
            .read_composition()
            .await
            .expect_err("no composition service");
        assert!(
            matches!(&refused, CallError::Plugin { error: PluginError::Unsupported(m), .. } if m.contains("CompositionService")),
            "{refused}"
        );
    }
}
