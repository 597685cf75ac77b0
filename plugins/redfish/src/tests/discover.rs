//! Tests of `probe` and `discover`: inventory read from the emulator's payloads, collection
//! pagination, virtual media under the system or its manager, MACs, and malformed collections.

use serde_json::{Value, json};

use super::fake::{CHASSIS, Fake, MANAGER, SYSTEM, VIRTUAL_MEDIA, fixture};
use crate::redfish::normalise_mac;
use podium_plugin::Error;
use podium_plugin::driver::{
    BootMode, BootPersistence, BootSettings, BootTarget, MediaSlot, MediaType, Nic, PowerState,
    System, SystemKind,
};
use podium_plugin::http::Method;
use podium_plugin::log::Level;

fn emulated_system() -> System {
    System {
        id: SYSTEM.to_owned(),
        kind: SystemKind::System,
        name: "node-1".to_owned(),
        uuid: Some("27946b59-9e44-4fa7-8e91-000000000001".to_owned()),
        manufacturer: Some("Sushy Emulator".to_owned()),
        model: None,
        serial: None,
        cpu_count: 0,
        memory_mib: 0,
        nics: vec![Nic {
            id: "52:54:00:00:00:01".to_owned(),
            name: Some("VNIC 52:54:00:00:00:01".to_owned()),
            mac: "52:54:00:00:00:01".to_owned(),
            speed_mbps: None,
        }],
        power: PowerState::Off,
        boot: Some(BootSettings {
            target: BootTarget::Pxe,
            persistence: BootPersistence::Continuous,
            mode: Some(BootMode::Uefi),
        }),
        media_slots: vec![
            MediaSlot {
                id: "Cd".to_owned(),
                media_types: vec![MediaType::Cd, MediaType::Dvd],
                inserted: false,
                image: None,
            },
            MediaSlot {
                id: "Floppy".to_owned(),
                media_types: vec![MediaType::Floppy, MediaType::Usb],
                inserted: false,
                image: None,
            },
        ],
    }
}

fn protocol(result: Result<Vec<System>, Error>) -> String {
    match result {
        Err(Error::Protocol(message)) => message,
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[test]
fn probe_reads_the_service_root_and_opens_systems() {
    let fake = Fake::emulator();
    let info = fake.client().probe().unwrap();
    assert_eq!(info.root_link, "/redfish/v1/");
    assert_eq!(info.version.as_deref(), Some("1.5.0"));
    assert_eq!(info.product, None);
    // The root is public; the Systems collection is what tests the credentials.
    assert!(fake.got("/redfish/v1/Systems"));
}

#[test]
fn probe_uses_the_configured_root_and_reports_product() {
    let mut fake = Fake::default();
    fake.json(
        "/custom",
        json!({"RedfishVersion": "1.11.0", "Product": "Pod Manager"}),
    );
    let info = fake.client_with(r#"{"root": "/custom/"}"#).probe().unwrap();
    assert_eq!(info.root_link, "/custom");
    assert_eq!(info.product.as_deref(), Some("Pod Manager"));
}

#[test]
fn probe_rejects_what_is_not_a_service_root() {
    let mut fake = Fake::default();
    fake.json("/redfish/v1", json!({"Name": "a web server"}));
    assert!(
        matches!(fake.client().probe(), Err(Error::Protocol(m)) if m.contains("not a Redfish service root"))
    );

    let mut fake = Fake::default();
    fake.answer(Method::Get, "/redfish/v1", 200, b"<html>hello</html>");
    assert!(matches!(fake.client().probe(), Err(Error::Protocol(m)) if m.contains("not JSON")));
}

#[test]
fn probe_fails_on_refused_credentials() {
    let mut fake = Fake::emulator();
    fake.answer(Method::Get, "/redfish/v1/Systems", 401, b"");
    assert!(matches!(fake.client().probe(), Err(Error::Unauthorized(_))));
}

#[test]
fn discovers_the_emulator() {
    let fake = Fake::emulator();
    let found = fake.client().discover().unwrap();
    // The emulator's chassis is no host: only its system is reported.
    assert_eq!(found, vec![emulated_system()]);
    for sent in fake.sent().iter() {
        assert!(sent.url.starts_with("/redfish/v1"), "{}", sent.url);
        assert!(
            sent.headers
                .contains(&("Accept".to_owned(), "application/json".to_owned()))
        );
        assert!(
            !sent
                .headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("authorization")),
            "the plugin never sends credentials"
        );
    }
    // The system has its own VirtualMedia link: its manager is not consulted.
    assert!(!fake.got(MANAGER));
}

#[test]
fn inspect_reads_one_system_as_discover_does_and_refuses_a_chassis() {
    let fake = Fake::emulator();
    assert_eq!(fake.client().inspect(SYSTEM).unwrap(), emulated_system());
    assert!(matches!(
        fake.client().inspect(CHASSIS),
        Err(Error::InvalidInput(m)) if m.contains("is a chassis")
    ));
    // Only that system's resources: not the service root, not the other members.
    assert!(!fake.got("/redfish/v1"));
    assert!(!fake.got("/redfish/v1/Systems"));
}

#[test]
fn inspect_of_a_system_that_is_gone_is_not_found() {
    let fake = Fake::emulator();
    assert!(matches!(
        fake.client().inspect("/redfish/v1/Systems/nope"),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        fake.client().inspect("Systems/1"),
        Err(Error::InvalidInput(m)) if m.starts_with("system-id:")
    ));
}

#[test]
fn chassis_only_where_the_service_has_them() {
    let mut fake = Fake::emulator();
    fake.edit("/redfish/v1", |root| {
        root.as_object_mut().unwrap().remove("Chassis");
    });
    let found = fake.client().discover().unwrap();
    assert_eq!(found, vec![emulated_system()]);
}

#[test]
fn virtual_media_under_the_manager() {
    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |system| {
        system.as_object_mut().unwrap().remove("VirtualMedia");
    });
    // A manager-owned collection, as on BMCs that put virtual media under the manager.
    let manager_media = format!("{MANAGER}/VirtualMedia");
    fake.edit(MANAGER, |manager| {
        manager["VirtualMedia"] = json!({"@odata.id": manager_media});
    });
    let mut collection = fixture("virtual_media");
    collection["@odata.id"] = json!(manager_media);
    collection["Members"] = json!([{"@odata.id": format!("{manager_media}/Cd")}]);
    fake.json(&manager_media, collection);
    let mut cd = fixture("virtual_media_cd_inserted");
    cd["@odata.id"] = json!(format!("{manager_media}/Cd"));
    cd.as_object_mut().unwrap().remove("Actions");
    fake.json(&format!("{manager_media}/Cd"), cd);

    let found = fake.client().discover().unwrap();
    assert!(fake.got(MANAGER));
    assert!(!fake.got(VIRTUAL_MEDIA));
    assert_eq!(
        found[0].media_slots,
        vec![MediaSlot {
            id: "Cd".to_owned(),
            media_types: vec![MediaType::Cd, MediaType::Dvd],
            inserted: true,
            image: Some("http://127.0.0.1:18124/boot.iso".to_owned()),
        }]
    );

    // And ejecting goes to the default action path under the manager's slot.
    fake.client().eject_media(SYSTEM, MediaType::Cd).unwrap();
    let changes = fake.changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(
        changes[0].url,
        format!("{manager_media}/Cd/Actions/VirtualMedia.EjectMedia")
    );
}

#[test]
fn no_virtual_media_anywhere_is_no_slots() {
    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |system| {
        system.as_object_mut().unwrap().remove("VirtualMedia");
    });
    fake.edit(MANAGER, |manager| {
        manager.as_object_mut().unwrap().remove("VirtualMedia");
    });
    let found = fake.client().discover().unwrap();
    assert!(found[0].media_slots.is_empty());
}

/// Three systems over three pages, the second `nextLink` absolute as some services send it.
fn paginated() -> Fake {
    let mut fake = Fake::emulator();
    let ids = ["a", "b", "c"];
    for id in ids {
        let mut system = fixture("system");
        let path = format!("/redfish/v1/Systems/{id}");
        system["@odata.id"] = json!(path);
        system["Id"] = json!(id);
        system["Name"] = json!(format!("node-{id}"));
        fake.json(&path, system);
    }
    fake.json(
        "/redfish/v1/Systems",
        json!({
            "@odata.id": "/redfish/v1/Systems",
            "Members@odata.count": 3,
            "Members": [{"@odata.id": "/redfish/v1/Systems/a"}],
            "Members@odata.nextLink": "/redfish/v1/Systems?$skip=1",
        }),
    );
    fake.json(
        "/redfish/v1/Systems?$skip=1",
        json!({
            "Members": [{"@odata.id": "/redfish/v1/Systems/b"}],
            "Members@odata.nextLink": "https://bmc.example:8443/redfish/v1/Systems?$skip=2",
        }),
    );
    fake.json(
        "https://bmc.example:8443/redfish/v1/Systems?$skip=2",
        json!({"Members": [{"@odata.id": "/redfish/v1/Systems/c"}]}),
    );
    fake
}

#[test]
fn follows_next_links() {
    let fake = paginated();
    let found = fake.client().discover().unwrap();
    let names: Vec<&str> = found.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["node-a", "node-b", "node-c"]);
    let ids: Vec<&str> = found.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids[..3],
        [
            "/redfish/v1/Systems/a",
            "/redfish/v1/Systems/b",
            "/redfish/v1/Systems/c"
        ]
    );
}

#[test]
fn system_ids_restrict_discovery() {
    let fake = paginated();
    let found = fake
        .client_with(r#"{"system_ids": ["b", "/redfish/v1/Systems/c", "gone"]}"#)
        .discover()
        .unwrap();
    let ids: Vec<&str> = found.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["/redfish/v1/Systems/b", "/redfish/v1/Systems/c"]);
    assert!(
        !fake.got("/redfish/v1/Systems/a"),
        "unselected systems are not fetched"
    );
    let logs = fake.logs();
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].0, Level::Warn);
    assert!(logs[0].1.contains("gone"));
}

#[test]
fn a_next_link_loop_is_a_protocol_error() {
    let mut fake = paginated();
    fake.json(
        "https://bmc.example:8443/redfish/v1/Systems?$skip=2",
        json!({
            "Members": [],
            "Members@odata.nextLink": "/redfish/v1/Systems?$skip=1",
        }),
    );
    let message = protocol(fake.client().discover());
    assert!(message.contains("leads back"), "{message}");
}

#[test]
fn malformed_members_are_named() {
    let mut fake = Fake::emulator();
    fake.edit("/redfish/v1/Systems", |c| {
        c["Members"] = json!(["/redfish/v1/Systems/1"])
    });
    let message = protocol(fake.client().discover());
    assert!(message.contains("Members[0] is not an object"), "{message}");

    let mut fake = Fake::emulator();
    fake.edit("/redfish/v1/Systems", |c| {
        c["Members"] = json!([{"@odata.id": SYSTEM}, {"Name": "x"}]);
    });
    let message = protocol(fake.client().discover());
    assert!(message.contains("Members[1] has no @odata.id"), "{message}");

    let mut fake = Fake::emulator();
    fake.edit("/redfish/v1/Systems", |c| {
        c.as_object_mut().unwrap().remove("Members");
    });
    let message = protocol(fake.client().discover());
    assert!(message.contains("no Members"), "{message}");

    let mut fake = Fake::emulator();
    fake.edit("/redfish/v1", |root| root["Systems"] = json!({}));
    let message = protocol(fake.client().discover());
    assert!(
        message.contains("Systems: the link has no @odata.id"),
        "{message}"
    );
}

#[test]
fn reads_cpu_memory_and_nics_leniently() {
    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |system| {
        system["ProcessorSummary"]["Count"] = json!(2);
        system["MemorySummary"]["TotalSystemMemoryGiB"] = json!(15.5);
        system["Model"] = json!(42); // wrong type: read as absent
        system["SerialNumber"] = json!("");
        system["Boot"]["BootSourceOverrideTarget"] = json!("UefiShell"); // not in the WIT
    });
    let nics = format!("{SYSTEM}/EthernetInterfaces");
    fake.edit(&nics, |c| {
        c["Members"] = json!([
            {"@odata.id": format!("{nics}/1")},
            {"@odata.id": format!("{nics}/2")},
            {"@odata.id": format!("{nics}/3")},
        ]);
    });
    fake.json(
        &format!("{nics}/1"),
        json!({"Id": "1", "MACAddress": "AA-BB-CC-DD-EE-0F", "SpeedMbps": 25000}),
    );
    fake.json(
        &format!("{nics}/2"),
        json!({"MACAddress": "", "PermanentMACAddress": "aabb.ccdd.ee10", "SpeedMbps": null}),
    );
    fake.json(
        &format!("{nics}/3"),
        json!({"Id": "3", "MACAddress": "not a mac"}),
    );

    let system = fake.client().discover().unwrap().remove(0);
    assert_eq!(system.cpu_count, 2);
    assert_eq!(system.memory_mib, 15_872);
    assert_eq!(system.model, None);
    assert_eq!(system.serial, None);
    assert_eq!(system.boot, None);
    assert_eq!(
        system.nics,
        vec![
            Nic {
                id: "1".to_owned(),
                name: None,
                mac: "aa:bb:cc:dd:ee:0f".to_owned(),
                speed_mbps: Some(25_000),
            },
            Nic {
                id: "2".to_owned(),
                name: None,
                mac: "aa:bb:cc:dd:ee:10".to_owned(),
                speed_mbps: None,
            },
        ]
    );
    assert!(fake.logs().iter().any(|(_, m)| m.contains("/3: no usable")));
}

/// A virtual interface (a VLAN, as DMTF's `public-rackmount1` lists) and an interface reusing
/// another's MAC are no NICs of the machine: left out, so the system is still discovered.
#[test]
fn virtual_interfaces_and_repeated_macs_are_left_out() {
    let mut fake = Fake::emulator();
    let nics = format!("{SYSTEM}/EthernetInterfaces");
    fake.edit(&nics, |c| {
        c["Members"] = json!([
            {"@odata.id": format!("{nics}/1")},
            {"@odata.id": format!("{nics}/vlan")},
            {"@odata.id": format!("{nics}/again")},
        ]);
    });
    fake.json(
        &format!("{nics}/1"),
        json!({"Id": "1", "MACAddress": "12:44:6A:3B:04:11", "EthernetInterfaceType": "Physical"}),
    );
    fake.json(
        &format!("{nics}/vlan"),
        json!({"Id": "vlan", "MACAddress": "12:44:6A:3B:04:11", "EthernetInterfaceType": "Virtual"}),
    );
    fake.json(
        &format!("{nics}/again"),
        json!({"Id": "again", "MACAddress": "12-44-6a-3b-04-11"}),
    );
    let system = fake.client().discover().unwrap().remove(0);
    let ids: Vec<&str> = system.nics.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["1"]);
    let logs = fake.logs();
    assert!(
        logs.iter().any(
            |(_, m)| m.contains("/again: MAC 12:44:6a:3b:04:11 is already that of interface 1")
        ),
        "{logs:?}"
    );
}

#[test]
fn fractional_memory() {
    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |system| {
        system["MemorySummary"]["TotalSystemMemoryGiB"] = json!(0.5);
    });
    assert_eq!(fake.client().discover().unwrap()[0].memory_mib, 512);
}

#[test]
fn mac_normalisation() {
    assert_eq!(
        normalise_mac("52:54:00:AB:cd:EF").as_deref(),
        Some("52:54:00:ab:cd:ef")
    );
    assert_eq!(
        normalise_mac("52-54-00-AB-CD-EF").as_deref(),
        Some("52:54:00:ab:cd:ef")
    );
    assert_eq!(
        normalise_mac("5254.00ab.cdef").as_deref(),
        Some("52:54:00:ab:cd:ef")
    );
    assert_eq!(
        normalise_mac("525400ABCDEF").as_deref(),
        Some("52:54:00:ab:cd:ef")
    );
    assert_eq!(normalise_mac("00:00:00:00:00:00"), None);
    assert_eq!(normalise_mac("52:54:00:ab:cd"), None);
    assert_eq!(normalise_mac("52:54:00:ab:cd:eg"), None);
    assert_eq!(normalise_mac(""), None);
}

#[test]
fn a_member_that_is_gone_fails_discovery() {
    let mut fake = Fake::emulator();
    fake.edit("/redfish/v1/Systems", |c| {
        c["Members"] = json!([{"@odata.id": "/redfish/v1/Systems/nope"}]);
    });
    assert!(matches!(
        fake.client().discover(),
        Err(Error::NotFound(m)) if m == "GET /redfish/v1/Systems/nope: Fake system nope was not found"
    ));
}

/// A member listed twice is read once (DMTF's `public-compose-action` lists a sled twice), and
/// a member whose body names another path is known by the link that reached it (its
/// `public-composability` serves one module with another's `@odata.id`).
#[test]
fn members_are_known_by_their_links_once_each() {
    let mut fake = Fake::emulator();
    fake.edit("/redfish/v1/Systems", |c| {
        c["Members"] = json!([{"@odata.id": SYSTEM}, {"@odata.id": SYSTEM}]);
    });
    fake.edit(SYSTEM, |s| {
        s["@odata.id"] = json!("/redfish/v1/Systems/elsewhere")
    });
    let found = fake.client().discover().unwrap();
    let systems: Vec<&str> = found
        .iter()
        .filter(|s| s.kind == SystemKind::System)
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(systems, [SYSTEM]);
    let logs = fake.logs();
    assert!(
        logs.iter()
            .any(|(level, m)| *level == Level::Warn && m.ends_with("is listed twice")),
        "{logs:?}"
    );
}

#[test]
fn fixtures_are_what_the_emulator_sent() {
    // Guards the captured payloads against accidental edits that would make the tests vacuous.
    let system: Value = fixture("system");
    assert_eq!(system["@odata.id"], SYSTEM);
    assert_eq!(system["VirtualMedia"]["@odata.id"], VIRTUAL_MEDIA);
    let manager = fixture("manager");
    assert_eq!(manager["VirtualMedia"]["@odata.id"], VIRTUAL_MEDIA);
}
