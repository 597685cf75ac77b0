//! Tests of the per-system calls: power, boot override, virtual media insert and eject, and the
//! requests they send.

use serde_json::json;

use super::fake::{CHASSIS, Fake, SYSTEM, VIRTUAL_MEDIA, fixture};
use podium_plugin::Error;
use podium_plugin::driver::{
    BootMode, BootPersistence, BootSettings, BootTarget, MediaRequest, MediaType, PowerAction,
    PowerState,
};
use podium_plugin::http::Method;

const RESET: &str =
    "/redfish/v1/Systems/27946b59-9e44-4fa7-8e91-000000000001/Actions/ComputerSystem.Reset";
const CD: &str = "/redfish/v1/Systems/27946b59-9e44-4fa7-8e91-000000000001/VirtualMedia/Cd";
const FLOPPY: &str = "/redfish/v1/Systems/27946b59-9e44-4fa7-8e91-000000000001/VirtualMedia/Floppy";

fn request(media_type: MediaType) -> MediaRequest {
    MediaRequest {
        image_url: "http://192.0.2.1/boot.iso".to_owned(),
        media_type,
        write_protected: true,
    }
}

#[test]
fn get_power_maps_power_state() {
    for (redfish, expected) in [
        ("On", PowerState::On),
        ("Off", PowerState::Off),
        ("PoweringOn", PowerState::PoweringOn),
        ("PoweringOff", PowerState::PoweringOff),
        ("Paused", PowerState::Unknown),
    ] {
        let mut fake = Fake::emulator();
        fake.edit(SYSTEM, |s| s["PowerState"] = json!(redfish));
        assert_eq!(
            fake.client().get_power(SYSTEM).unwrap(),
            expected,
            "{redfish}"
        );
    }
    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |s| {
        s.as_object_mut().unwrap().remove("PowerState");
    });
    assert_eq!(
        fake.client().get_power(SYSTEM).unwrap(),
        PowerState::Unknown
    );
}

#[test]
fn get_power_of_an_unknown_system() {
    let fake = Fake::emulator();
    let err = fake
        .client()
        .get_power("/redfish/v1/Systems/nope")
        .unwrap_err();
    assert_eq!(
        err,
        Error::NotFound("GET /redfish/v1/Systems/nope: Fake system nope was not found".to_owned())
    );
}

#[test]
fn system_ids_must_be_paths() {
    let fake = Fake::emulator();
    for id in ["", "node-1", "//evil/redfish", "/redfish/v1/Systems/a b"] {
        assert!(
            matches!(fake.client().get_power(id), Err(Error::InvalidInput(m)) if m.starts_with("system-id")),
            "{id:?}"
        );
    }
    assert!(fake.sent().is_empty());
}

#[test]
fn set_power_posts_reset_types() {
    for (action, reset_type) in [
        (PowerAction::On, "On"),
        (PowerAction::Off, "ForceOff"),
        (PowerAction::GracefulShutdown, "GracefulShutdown"),
        (PowerAction::ForceOff, "ForceOff"),
        (PowerAction::GracefulRestart, "GracefulRestart"),
        (PowerAction::ForceRestart, "ForceRestart"),
    ] {
        let fake = Fake::emulator();
        fake.client().set_power(SYSTEM, action).unwrap();
        let changes = fake.changes();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].method, Method::Post);
        assert_eq!(changes[0].url, RESET);
        assert_eq!(changes[0].body, Some(json!({"ResetType": reset_type})));
        assert!(
            changes[0]
                .headers
                .contains(&("Content-Type".to_owned(), "application/json".to_owned()))
        );
    }
}

#[test]
fn set_power_checks_allowable_values() {
    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |s| {
        s["Actions"]["#ComputerSystem.Reset"]["ResetType@Redfish.AllowableValues"] =
            json!(["On", "ForceOff"]);
    });
    let err = fake
        .client()
        .set_power(SYSTEM, PowerAction::GracefulRestart)
        .unwrap_err();
    let Error::Unsupported(message) = err else {
        panic!("expected unsupported, got {err:?}");
    };
    assert!(message.contains("GracefulRestart"), "{message}");
    assert!(message.contains("allowed: On, ForceOff"), "{message}");
    assert!(fake.changes().is_empty());
}

#[test]
fn set_power_uses_the_advertised_target_else_the_default() {
    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |s| {
        s["Actions"]["#ComputerSystem.Reset"]["target"] = json!("/redfish/v1/Systems/1/Reset");
    });
    fake.client().set_power(SYSTEM, PowerAction::On).unwrap();
    assert_eq!(fake.changes()[0].url, "/redfish/v1/Systems/1/Reset");

    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |s| {
        s.as_object_mut().unwrap().remove("Actions");
    });
    fake.client().set_power(SYSTEM, PowerAction::On).unwrap();
    assert_eq!(fake.changes()[0].url, RESET);
}

#[test]
fn set_power_rejected_by_the_service() {
    let mut fake = Fake::emulator();
    let body = fixture("error_501_reset").to_string();
    fake.answer(Method::Post, RESET, 501, body.as_bytes());
    let err = fake
        .client()
        .set_power(SYSTEM, PowerAction::On)
        .unwrap_err();
    assert_eq!(
        err,
        Error::Unsupported(format!("POST {RESET}: Power state Bogus is not supported"))
    );
}

#[test]
fn set_boot_override_patches_boot() {
    let fake = Fake::emulator();
    fake.client()
        .set_boot_override(
            SYSTEM,
            &BootSettings {
                target: BootTarget::Cd,
                persistence: BootPersistence::Once,
                mode: Some(BootMode::Legacy),
            },
        )
        .unwrap();
    let changes = fake.changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].method, Method::Patch);
    assert_eq!(changes[0].url, SYSTEM);
    assert_eq!(
        changes[0].body,
        Some(json!({"Boot": {
            "BootSourceOverrideTarget": "Cd",
            "BootSourceOverrideEnabled": "Once",
            "BootSourceOverrideMode": "Legacy",
        }}))
    );
}

#[test]
fn set_boot_override_leaves_the_mode_alone_unless_given() {
    let fake = Fake::emulator();
    fake.client()
        .set_boot_override(
            SYSTEM,
            &BootSettings {
                target: BootTarget::None,
                persistence: BootPersistence::Disabled,
                mode: None,
            },
        )
        .unwrap();
    assert_eq!(
        fake.changes()[0].body,
        Some(json!({"Boot": {
            "BootSourceOverrideTarget": "None",
            "BootSourceOverrideEnabled": "Disabled",
        }}))
    );
}

#[test]
fn set_boot_override_checks_allowable_targets() {
    // The emulator allows Pxe, Cd, Hdd and UefiHttp.
    let fake = Fake::emulator();
    let err = fake
        .client()
        .set_boot_override(
            SYSTEM,
            &BootSettings {
                target: BootTarget::Usb,
                persistence: BootPersistence::Once,
                mode: None,
            },
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("Usb") && m.contains("Pxe, Cd, Hdd, UefiHttp")),
        "{err:?}"
    );
    assert!(fake.changes().is_empty());
}

#[test]
fn insert_cd_into_the_free_cd_slot() {
    let fake = Fake::emulator();
    fake.client()
        .insert_media(SYSTEM, &request(MediaType::Cd))
        .unwrap();
    let changes = fake.changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(
        changes[0].url,
        format!("{CD}/Actions/VirtualMedia.InsertMedia")
    );
    assert_eq!(
        changes[0].body,
        Some(
            json!({"Image": "http://192.0.2.1/boot.iso", "Inserted": true, "WriteProtected": true})
        )
    );
}

#[test]
fn dvd_and_usb_find_their_slots() {
    let fake = Fake::emulator();
    fake.client()
        .insert_media(SYSTEM, &request(MediaType::Dvd))
        .unwrap();
    fake.client()
        .insert_media(SYSTEM, &request(MediaType::Usb))
        .unwrap();
    let urls: Vec<String> = fake.changes().into_iter().map(|s| s.url).collect();
    assert_eq!(
        urls,
        [
            format!("{CD}/Actions/VirtualMedia.InsertMedia"),
            format!("{FLOPPY}/Actions/VirtualMedia.InsertMedia"),
        ]
    );
}

#[test]
fn cd_falls_back_to_a_dvd_only_slot() {
    let mut fake = Fake::emulator();
    fake.edit(CD, |cd| cd["MediaTypes"] = json!(["DVD"]));
    fake.client()
        .insert_media(SYSTEM, &request(MediaType::Cd))
        .unwrap();
    assert_eq!(
        fake.changes()[0].url,
        format!("{CD}/Actions/VirtualMedia.InsertMedia")
    );
}

#[test]
fn inserting_into_a_full_slot_is_a_conflict() {
    let mut fake = Fake::emulator();
    fake.json(CD, fixture("virtual_media_cd_inserted"));
    let err = fake
        .client()
        .insert_media(SYSTEM, &request(MediaType::Cd))
        .unwrap_err();
    assert_eq!(
        err,
        Error::Conflict(format!(
            "{SYSTEM}: every slot taking CD is in use; slot Cd holds http://127.0.0.1:18124/boot.iso"
        ))
    );
    assert!(fake.changes().is_empty());
}

#[test]
fn a_missing_media_type_is_unsupported() {
    let mut fake = Fake::emulator();
    fake.edit(VIRTUAL_MEDIA, |c| {
        c["Members"] = json!([{"@odata.id": FLOPPY}])
    });
    let err = fake
        .client()
        .insert_media(SYSTEM, &request(MediaType::Cd))
        .unwrap_err();
    assert_eq!(
        err,
        Error::Unsupported(format!(
            "{SYSTEM}: no virtual media slot takes CD; slots: Floppy (Floppy, USBStick)"
        ))
    );

    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |s| {
        s.as_object_mut().unwrap().remove("VirtualMedia");
        s.as_object_mut().unwrap().remove("Links");
    });
    let err = fake
        .client()
        .insert_media(SYSTEM, &request(MediaType::Floppy))
        .unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("have no virtual media")),
        "{err:?}"
    );
}

#[test]
fn an_empty_image_url_is_invalid_input() {
    let fake = Fake::emulator();
    let mut req = request(MediaType::Cd);
    req.image_url = " ".to_owned();
    assert!(matches!(
        fake.client().insert_media(SYSTEM, &req),
        Err(Error::InvalidInput(m)) if m.starts_with("image-url")
    ));
}

#[test]
fn eject_ejects_every_inserted_slot_of_the_type() {
    let mut fake = Fake::emulator();
    fake.json(CD, fixture("virtual_media_cd_inserted"));
    fake.client().eject_media(SYSTEM, MediaType::Dvd).unwrap();
    let changes = fake.changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].method, Method::Post);
    assert_eq!(
        changes[0].url,
        format!("{CD}/Actions/VirtualMedia.EjectMedia")
    );
    assert_eq!(changes[0].body, Some(json!({})));
}

#[test]
fn eject_with_nothing_inserted_sends_nothing() {
    let fake = Fake::emulator();
    fake.client().eject_media(SYSTEM, MediaType::Cd).unwrap();
    fake.client().eject_media(SYSTEM, MediaType::Usb).unwrap();
    assert!(fake.changes().is_empty());
}

#[test]
fn get_chassis_power_reads_its_own_power_state() {
    let mut fake = Fake::emulator();
    assert_eq!(
        fake.client().get_chassis_power(CHASSIS).unwrap(),
        PowerState::On
    );
    fake.edit(CHASSIS, |c| c["PowerState"] = json!("Off"));
    assert_eq!(
        fake.client().get_chassis_power(CHASSIS).unwrap(),
        PowerState::Off
    );
    // A rack has no power of its own.
    fake.edit(CHASSIS, |c| {
        c.as_object_mut().unwrap().remove("PowerState");
    });
    let err = fake.client().get_chassis_power(CHASSIS).unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("no PowerState")),
        "{err:?}"
    );
}

#[test]
fn set_chassis_power_posts_chassis_reset_where_advertised() {
    let mut fake = Fake::emulator();
    // The captured chassis advertises no reset: nothing is sent, nothing guessed.
    let err = fake
        .client()
        .set_chassis_power(CHASSIS, PowerAction::ForceOff)
        .unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("#Chassis.Reset")),
        "{err:?}"
    );
    assert!(fake.changes().is_empty());

    let target = format!("{CHASSIS}/Actions/Chassis.Reset");
    fake.edit(CHASSIS, |c| {
        c["Actions"] = json!({"#Chassis.Reset": {
            "target": target,
            "ResetType@Redfish.AllowableValues": ["On", "ForceOff"],
        }});
    });
    fake.client()
        .set_chassis_power(CHASSIS, PowerAction::Off)
        .unwrap();
    let changes = fake.changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].method, Method::Post);
    assert_eq!(changes[0].url, target);
    assert_eq!(changes[0].body, Some(json!({"ResetType": "ForceOff"})));

    let err = fake
        .client()
        .set_chassis_power(CHASSIS, PowerAction::GracefulRestart)
        .unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("allowed: On, ForceOff")),
        "{err:?}"
    );
    assert_eq!(fake.changes().len(), 1);
    let err = fake
        .client()
        .set_chassis_power("Chassis/1", PowerAction::On)
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidInput(m) if m.starts_with("chassis-id")),
        "{err:?}"
    );
}
