//! Tests of BIOS settings on a BMC shaped as vendors serve them (a settings object with staged
//! values and apply times, a registry file named as its registry, typed values), beside what
//! sushy-tools serves (tests/all/bios.rs).

use serde_json::json;

use super::fake::{Fake, SYSTEM};
use podium_plugin::Error;
use podium_plugin::driver::{ApplyTime, Attribute, AttributeType, AttributeValue, BiosChange};
use podium_plugin::http::Method;

const BIOS: &str = "/redfish/v1/Systems/27946b59-9e44-4fa7-8e91-000000000001/Bios";
const SETTINGS: &str = "/redfish/v1/Systems/27946b59-9e44-4fa7-8e91-000000000001/Bios/Settings";
const REGISTRY: &str = "/redfish/v1/Registries/BiosAttributeRegistry.v1_2_0/en";

/// A BMC whose BIOS has `ProcTurboMode` staged to `Disabled`, applied on reset or at once.
fn vendor() -> Fake {
    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |s| s["Bios"] = json!({"@odata.id": BIOS}));
    fake.edit("/redfish/v1", |r| {
        r["Registries"] = json!({"@odata.id": "/redfish/v1/Registries"});
    });
    fake.json(
        BIOS,
        json!({
            "@odata.id": BIOS,
            "AttributeRegistry": "BiosAttributeRegistry.v1_2_0",
            "Attributes": {"ProcTurboMode": "Enabled", "NumCores": 8, "QuietBoot": true,
                           "AdminPassword": "not-shown", "AssetTag": null},
            "@Redfish.Settings": {
                "SettingsObject": {"@odata.id": SETTINGS},
                "SupportedApplyTimes": ["OnReset", "Immediate", "Sometime"]
            }
        }),
    );
    fake.json(
        SETTINGS,
        json!({"@odata.id": SETTINGS, "Attributes": {"ProcTurboMode": "Disabled", "NumCores": 8}}),
    );
    fake.json(
        "/redfish/v1/Registries",
        json!({"Members": [{"@odata.id": "/redfish/v1/Registries/Base"},
                           {"@odata.id": "/redfish/v1/Registries/BiosAttributeRegistry.v1_2_0"}]}),
    );
    fake.json(
        "/redfish/v1/Registries/Base",
        json!({"Id": "Base.1.0", "Location": [{"Uri": "/redfish/v1/Registries/Base/en"}]}),
    );
    fake.json(
        "/redfish/v1/Registries/BiosAttributeRegistry.v1_2_0",
        json!({"Id": "BiosAttributeRegistry.v1_2_0",
               "Location": [{"Language": "de", "Uri": "/de"}, {"Language": "en", "Uri": REGISTRY}]}),
    );
    fake.json(
        REGISTRY,
        json!({"Id": "BiosAttributeRegistry.v1_2_0", "RegistryEntries": {"Attributes": [
            {"AttributeName": "ProcTurboMode", "Type": "Enumeration",
             "Value": [{"ValueName": "Enabled"}, {"ValueName": "Disabled"}], "ResetRequired": true},
            {"AttributeName": "NumCores", "Type": "Integer", "LowerBound": 1, "UpperBound": 64,
             "Immutable": true},
            {"AttributeName": "AdminPassword", "Type": "Password", "MaxLength": 32},
            {"AttributeName": "Odd", "Type": "Unheard-of"},
            "not an entry"
        ]}}),
    );
    fake
}

#[test]
fn a_bios_is_typed_by_its_registry_with_what_is_staged() {
    let fake = vendor();
    let bios = fake.client().read_bios(SYSTEM).unwrap();
    let value = |name: &str| {
        bios.attributes
            .iter()
            .find(|a| a.name == name)
            .unwrap_or_else(|| panic!("{name} in {bios:?}"))
            .value
            .clone()
    };
    assert_eq!(
        value("ProcTurboMode"),
        Some(AttributeValue::Text("Enabled".into()))
    );
    assert_eq!(value("NumCores"), Some(AttributeValue::Integer(8)));
    assert_eq!(value("QuietBoot"), Some(AttributeValue::Boolean(true)));
    assert_eq!(value("AdminPassword"), None, "a password is never read out");
    assert_eq!(value("AssetTag"), None);
    assert_eq!(
        bios.pending,
        [Attribute {
            name: "ProcTurboMode".into(),
            value: Some(AttributeValue::Text("Disabled".into()))
        }]
    );
    assert_eq!(bios.apply_times, [ApplyTime::OnReset, ApplyTime::Immediate]);
    let names: Vec<_> = bios.registry.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        ["ProcTurboMode", "NumCores", "AdminPassword"],
        "unknown types are left out"
    );
    assert!(bios.registry[0].reset_required);
    assert_eq!(bios.registry[0].allowed, ["Enabled", "Disabled"]);
    assert!(bios.registry[1].read_only, "Immutable is read-only");
    assert_eq!(bios.registry[1].upper_bound, Some(64));
    assert_eq!(bios.registry[2].attribute_type, AttributeType::Password);
    assert!(fake.got(REGISTRY));
    assert!(!fake.got("/de") && !fake.got("/redfish/v1/Registries/Base/en"));
}

#[test]
fn a_change_is_staged_in_the_settings_object_with_its_apply_time() {
    let fake = vendor();
    let change = BiosChange {
        attributes: vec![
            Attribute {
                name: "ProcTurboMode".into(),
                value: Some(AttributeValue::Text("Disabled".into())),
            },
            Attribute {
                name: "QuietBoot".into(),
                value: Some(AttributeValue::Boolean(false)),
            },
        ],
        apply_time: Some(ApplyTime::OnReset),
    };
    fake.client().set_bios(SYSTEM, change).unwrap();
    let changes = fake.changes();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].method, Method::Patch);
    assert_eq!(changes[0].url, SETTINGS);
    assert_eq!(
        changes[0].body,
        Some(json!({
            "Attributes": {"ProcTurboMode": "Disabled", "QuietBoot": false},
            "@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}
        }))
    );
}

#[test]
fn a_system_linking_no_part_has_no_full_inventory() {
    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |s| {
        let s = s.as_object_mut().unwrap();
        for part in [
            "Processors",
            "Memory",
            "Storage",
            "SimpleStorage",
            "EthernetInterfaces",
        ] {
            s.remove(part);
        }
    });
    let err = fake.client().read_hardware(SYSTEM).unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(why) if why.contains("Processors")),
        "{err:?}"
    );
}

#[test]
fn a_system_without_a_bios_is_unsupported() {
    let fake = Fake::emulator();
    let err = fake.client().read_bios(SYSTEM).unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(why) if why.contains("Bios")),
        "{err:?}"
    );
}

/// A BMC listing many registries (messages, one per NIC) before its BIOS's: the one named like
/// the `Bios`'s registry is read first, whatever the cap on files read.
#[test]
fn the_bios_registry_is_found_among_many() {
    let mut fake = vendor();
    let mut members: Vec<_> = (0..40)
        .map(|i| json!({"@odata.id": format!("/redfish/v1/Registries/NetworkAttributes{i}")}))
        .collect();
    members.push(json!({"@odata.id": "/redfish/v1/Registries/BiosAttributeRegistry.v1_2_0"}));
    fake.json("/redfish/v1/Registries", json!({ "Members": members }));
    let bios = fake.client().read_bios(SYSTEM).unwrap();
    assert_eq!(bios.registry.len(), 3, "{bios:?}");
    assert!(!fake.got("/redfish/v1/Registries/NetworkAttributes39"));
}

#[test]
fn a_reset_goes_to_the_action_the_bios_advertises_and_nowhere_else() {
    let fake = vendor();
    let err = fake.client().reset_bios(SYSTEM).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err:?}");
    assert!(fake.changes().is_empty(), "no URL is guessed");

    let mut fake = vendor();
    let target = format!("{BIOS}/Actions/Bios.ResetBios.Oem");
    fake.edit(BIOS, |b| {
        b["Actions"] = json!({"#Bios.ResetBios": {"target": target}});
    });
    fake.client().reset_bios(SYSTEM).unwrap();
    let sent = fake.changes();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        (sent[0].method, sent[0].url.as_str()),
        (Method::Post, target.as_str())
    );
    assert_eq!(sent[0].body, Some(json!({})));
}
