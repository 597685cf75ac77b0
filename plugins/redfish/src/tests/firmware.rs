//! Tests of firmware on BMCs shaped as vendors serve them: a `FirmwareInventory` shared by
//! several systems, a `SimpleUpdate` answered with a `Task` or a task monitor, tasks in every
//! state; beside what sushy-tools and DMTF's mockups serve (tests/all/firmware.rs).

use serde_json::json;

use super::fake::{Fake, SYSTEM};
use podium_plugin::Error;
use podium_plugin::driver::{ComponentKind, FirmwareUpdate, TaskState};
use podium_plugin::http::Method;

const SERVICE: &str = "/redfish/v1/UpdateService";
const ACTION: &str = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate";
const INVENTORY: &str = "/redfish/v1/UpdateService/FirmwareInventory";
const MANAGER: &str = "/redfish/v1/Managers/27946b59-9e44-4fa7-8e91-000000000001";

/// A BMC with an update service whose inventory lists this system's BIOS, its manager's
/// firmware, a NIC's, another system's BIOS, and an unreadable member.
fn vendor() -> Fake {
    let mut fake = Fake::emulator();
    fake.json(
        SERVICE,
        json!({
            "@odata.id": SERVICE,
            "FirmwareInventory": {"@odata.id": INVENTORY},
            "Actions": {"#UpdateService.SimpleUpdate": {
                "target": ACTION,
                "TransferProtocol@Redfish.AllowableValues": ["HTTP", "HTTPS"]
            }}
        }),
    );
    let member = |id: &str| json!({"@odata.id": format!("{INVENTORY}/{id}")});
    fake.json(
        INVENTORY,
        json!({"Members": [member("BIOS"), member("iDRAC"), member("NIC.1"), member("Other"),
                           member("Broken")]}),
    );
    fake.json(
        &format!("{INVENTORY}/BIOS"),
        json!({"@odata.id": format!("{INVENTORY}/BIOS"), "Id": "BIOS", "Name": "System BIOS",
               "Version": "2.3.1", "Updateable": true,
               "RelatedItem": [{"@odata.id": SYSTEM}]}),
    );
    fake.json(
        &format!("{INVENTORY}/iDRAC"),
        json!({"@odata.id": format!("{INVENTORY}/iDRAC"), "Id": "iDRAC", "Name": "Controller",
               "Version": "7.0", "Updateable": false,
               "RelatedItem": [{"@odata.id": MANAGER}]}),
    );
    fake.json(
        &format!("{INVENTORY}/NIC.1"),
        json!({"@odata.id": format!("{INVENTORY}/NIC.1"), "Id": "NIC.1",
               "Name": "Network adapter", "Version": "22.5", "Updateable": true}),
    );
    fake.json(
        &format!("{INVENTORY}/Other"),
        json!({"@odata.id": format!("{INVENTORY}/Other"), "Id": "Other", "Name": "BIOS",
               "Version": "9", "RelatedItem": [{"@odata.id": "/redfish/v1/Systems/other"}]}),
    );
    fake
}

fn update() -> FirmwareUpdate {
    FirmwareUpdate {
        image_url: "http://images.example/bios-2.4.0.bin".into(),
        targets: vec![format!("{INVENTORY}/BIOS")],
    }
}

#[test]
fn the_inventory_shows_what_belongs_to_the_system_each_typed() {
    let fake = vendor();
    let components = fake.client().read_firmware(SYSTEM).unwrap();
    let seen: Vec<(&str, ComponentKind, Option<&str>, bool)> = components
        .iter()
        .map(|c| (c.name.as_str(), c.kind, c.version.as_deref(), c.updateable))
        .collect();
    assert_eq!(
        seen,
        [
            ("System BIOS", ComponentKind::Bios, Some("2.3.1"), true),
            ("Controller", ComponentKind::Bmc, Some("7.0"), false),
            ("Network adapter", ComponentKind::Nic, Some("22.5"), true),
        ],
        "another system's BIOS and the unreadable member are left out"
    );
    assert!(
        fake.logs()
            .iter()
            .any(|(_, line)| line.contains("Broken") && line.contains("left out")),
        "{:?}",
        fake.logs()
    );
}

/// An inventory that lists the BIOS image before the running one (as some vendors list the
/// previous and the staged images too) shows first the one whose version the system reports.
#[test]
fn the_running_bios_comes_first() {
    let mut fake = vendor();
    fake.json(
        INVENTORY,
        json!({"Members": [{"@odata.id": format!("{INVENTORY}/Previous-BIOS")},
                           {"@odata.id": format!("{INVENTORY}/BIOS")}]}),
    );
    fake.json(
        &format!("{INVENTORY}/Previous-BIOS"),
        json!({"@odata.id": format!("{INVENTORY}/Previous-BIOS"), "Id": "Previous-BIOS",
               "Name": "System BIOS", "Version": "2.2.0", "Updateable": false}),
    );
    fake.edit(SYSTEM, |s| s["BiosVersion"] = json!("2.3.1"));
    let components = fake.client().read_firmware(SYSTEM).unwrap();
    let versions: Vec<Option<&str>> = components.iter().map(|c| c.version.as_deref()).collect();
    assert_eq!(versions, [Some("2.3.1"), Some("2.2.0")]);
}

#[test]
fn without_an_inventory_the_managers_version_is_shown() {
    let mut fake = vendor();
    fake.edit(SERVICE, |s| {
        s.as_object_mut().unwrap().remove("FirmwareInventory");
    });
    let components = fake.client().read_firmware(SYSTEM).unwrap();
    assert_eq!(components.len(), 1, "{components:?}");
    assert_eq!(components[0].id, MANAGER);
    assert_eq!(components[0].kind, ComponentKind::Bmc);
    assert_eq!(components[0].version.as_deref(), Some("1.00"));
    assert!(components[0].updateable, "the service offers SimpleUpdate");
}

#[test]
fn an_unreadable_update_service_leaves_the_managers_version_not_updateable() {
    // The emulator's root links an UpdateService this fake does not serve (a 404).
    let fake = Fake::emulator();
    let components = fake.client().read_firmware(SYSTEM).unwrap();
    assert_eq!(components.len(), 1, "{components:?}");
    assert!(!components[0].updateable, "{components:?}");
    assert!(
        fake.logs()
            .iter()
            .any(|(_, line)| line.contains("update service cannot be read")),
        "{:?}",
        fake.logs()
    );
}

#[test]
fn a_bmc_that_reports_no_firmware_has_none() {
    let mut fake = Fake::emulator();
    fake.edit(MANAGER, |m| {
        m.as_object_mut().unwrap().remove("FirmwareVersion");
    });
    let err = fake.client().read_firmware(SYSTEM).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err:?}");
}

#[test]
fn an_update_names_the_task_the_service_answers_in_its_body() {
    let mut fake = vendor();
    fake.answer_located(
        Method::Post,
        ACTION,
        202,
        json!({"@odata.id": "/redfish/v1/TaskService/Tasks/7",
               "@odata.type": "#Task.v1_4_3.Task", "TaskState": "New"})
        .to_string()
        .as_bytes(),
        "/taskmon/7",
    );
    let task = fake.client().update_firmware(SYSTEM, update()).unwrap();
    assert_eq!(task.as_deref(), Some("/redfish/v1/TaskService/Tasks/7"));
    let sent = fake.changes();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].url, ACTION);
    assert_eq!(
        sent[0].body,
        Some(json!({
            "ImageURI": "http://images.example/bios-2.4.0.bin",
            "Targets": [format!("{INVENTORY}/BIOS")],
            "TransferProtocol": "HTTP",
        }))
    );
}

#[test]
fn an_update_answered_with_a_location_only_names_its_monitor() {
    let mut fake = vendor();
    fake.edit(SERVICE, |s| {
        s["Actions"]["#UpdateService.SimpleUpdate"] = json!({"target": ACTION});
    });
    fake.answer_located(
        Method::Post,
        ACTION,
        204,
        b"",
        "/redfish/v1/TaskService/Tasks/42",
    );
    let task = fake.client().update_firmware(SYSTEM, update()).unwrap();
    assert_eq!(task.as_deref(), Some("/redfish/v1/TaskService/Tasks/42"));
    let body = fake.changes()[0].body.clone().unwrap();
    assert!(
        body.get("TransferProtocol").is_none(),
        "no protocol where the action lists none: {body}"
    );

    let mut done = vendor();
    done.answer(Method::Post, ACTION, 200, b"{}");
    assert_eq!(
        done.client().update_firmware(SYSTEM, update()).unwrap(),
        None
    );
}

#[test]
fn a_service_without_simple_update_takes_no_update() {
    let mut fake = vendor();
    fake.edit(SERVICE, |s| {
        s.as_object_mut().unwrap().remove("Actions");
    });
    let err = fake.client().update_firmware(SYSTEM, update()).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err:?}");
    assert!(fake.changes().is_empty());
}

#[test]
fn a_tasks_state_percent_and_messages_are_read_in_every_state() {
    let task = "/redfish/v1/TaskService/Tasks/7";
    let cases = [
        (
            200,
            json!({"TaskState": "Running", "PercentComplete": 40,
                     "Messages": [{"Message": "Flash\u{200B}ing\u{7}"}, {"Message": " "}, {}]}),
            TaskState::Running,
            Some(40),
            vec!["Flashing "],
        ),
        (
            200,
            json!({"TaskState": "Completed", "TaskStatus": "OK", "PercentComplete": 100.0}),
            TaskState::Completed,
            Some(100),
            vec![],
        ),
        (
            200,
            json!({"TaskState": "Completed", "TaskStatus": "Critical"}),
            TaskState::Failed,
            None,
            vec![],
        ),
        (
            200,
            json!({"TaskState": "Exception", "PercentComplete": 250,
                     "Messages": [{"Message": "Image is not signed"}]}),
            TaskState::Failed,
            Some(100),
            vec!["Image is not signed"],
        ),
        (
            200,
            json!({"TaskState": "Cancelled"}),
            TaskState::Failed,
            None,
            vec![],
        ),
        // A task monitor: 202 while the task runs, the operation's own answer once done.
        (
            202,
            json!({"TaskState": "Starting", "PercentComplete": -3}),
            TaskState::Running,
            Some(0),
            vec![],
        ),
        (202, json!({}), TaskState::Running, None, vec![]),
        (204, json!(null), TaskState::Completed, None, vec![]),
    ];
    for (status, body, state, percent, messages) in cases {
        let mut fake = vendor();
        let body = if body.is_null() {
            Vec::new()
        } else {
            body.to_string().into_bytes()
        };
        fake.answer(Method::Get, task, status, &body);
        let read = fake.client().read_task(SYSTEM, task).unwrap();
        assert_eq!(read.state, state, "{status} {body:?}");
        assert_eq!(read.percent, percent, "{status} {body:?}");
        assert_eq!(read.messages, messages, "{status} {body:?}");
    }
    let gone = vendor().client().read_task(SYSTEM, task).unwrap_err();
    assert!(matches!(gone, Error::NotFound(_)), "{gone:?}");
    let bad = vendor()
        .client()
        .read_task(SYSTEM, "not a path")
        .unwrap_err();
    assert!(matches!(bad, Error::InvalidInput(_)), "{bad:?}");
}
