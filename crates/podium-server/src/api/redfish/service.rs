//! The service's own documents: the versions, the service root, OData's service document and
//! the `$metadata` that names the schemas the answers use.

use axum::Json;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::{ROOT, resource};

pub(super) async fn versions() -> Response {
    Json(json!({"v1": "/redfish/v1/"})).into_response()
}

/// The service root answers without credentials, as Redfish requires.
pub(super) async fn service_root() -> Response {
    resource(json!({
        "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot",
        "@odata.id": "/redfish/v1/",
        "Id": "RootService",
        "Name": "Podium Redfish Service",
        "RedfishVersion": "1.6.0",
        "Vendor": "Podium",
        "Product": "Podium",
        "Systems": {"@odata.id": format!("{ROOT}/Systems")},
        "Managers": {"@odata.id": format!("{ROOT}/Managers")},
        "Chassis": {"@odata.id": format!("{ROOT}/Chassis")},
        "SessionService": {"@odata.id": format!("{ROOT}/SessionService")},
        "AccountService": {"@odata.id": format!("{ROOT}/AccountService")},
        "TaskService": {"@odata.id": format!("{ROOT}/TaskService")},
        "EventService": {"@odata.id": format!("{ROOT}/EventService")},
        "UpdateService": {"@odata.id": format!("{ROOT}/UpdateService")},
        "Registries": {"@odata.id": format!("{ROOT}/Registries")},
        "Links": {"Sessions": {"@odata.id": format!("{ROOT}/SessionService/Sessions")}},
    }))
}

pub(super) async fn odata() -> Response {
    let entry = |name: &str, url: &str| json!({"name": name, "kind": "Singleton", "url": url});
    Json(json!({
        "@odata.context": "/redfish/v1/$metadata",
        "value": [
            entry("Service", "/redfish/v1/"),
            entry("Systems", "/redfish/v1/Systems"),
            entry("Managers", "/redfish/v1/Managers"),
            entry("Chassis", "/redfish/v1/Chassis"),
            entry("SessionService", "/redfish/v1/SessionService"),
            entry("AccountService", "/redfish/v1/AccountService"),
            entry("TaskService", "/redfish/v1/TaskService"),
            entry("EventService", "/redfish/v1/EventService"),
            entry("UpdateService", "/redfish/v1/UpdateService"),
            entry("Registries", "/redfish/v1/Registries"),
            entry("Sessions", "/redfish/v1/SessionService/Sessions"),
        ],
    }))
    .into_response()
}

/// The CSDL document: the DMTF schemas the service's resources are instances of.
pub(super) async fn metadata() -> Response {
    const SCHEMAS: [(&str, &str); 42] = [
        ("ChassisCollection", "ChassisCollection"),
        ("Chassis", "Chassis.v1_14_0"),
        ("ServiceRoot", "ServiceRoot.v1_5_0"),
        ("ComputerSystemCollection", "ComputerSystemCollection"),
        ("ComputerSystem", "ComputerSystem.v1_13_0"),
        ("EthernetInterfaceCollection", "EthernetInterfaceCollection"),
        ("EthernetInterface", "EthernetInterface.v1_4_0"),
        ("ManagerCollection", "ManagerCollection"),
        ("Manager", "Manager.v1_10_0"),
        ("VirtualMediaCollection", "VirtualMediaCollection"),
        ("VirtualMedia", "VirtualMedia.v1_4_0"),
        ("SessionService", "SessionService.v1_1_8"),
        ("SessionCollection", "SessionCollection"),
        ("Session", "Session.v1_3_0"),
        ("TaskService", "TaskService.v1_1_5"),
        ("TaskCollection", "TaskCollection"),
        ("Task", "Task.v1_4_3"),
        ("Message", "Message.v1_1_1"),
        ("AccountService", "AccountService.v1_5_0"),
        ("ManagerAccountCollection", "ManagerAccountCollection"),
        ("ManagerAccount", "ManagerAccount.v1_4_0"),
        ("RoleCollection", "RoleCollection"),
        ("Role", "Role.v1_2_4"),
        ("Bios", "Bios.v1_1_0"),
        ("Settings", "Settings.v1_3_3"),
        ("SecureBoot", "SecureBoot.v1_1_0"),
        ("ProcessorCollection", "ProcessorCollection"),
        ("Processor", "Processor.v1_0_0"),
        ("MemoryCollection", "MemoryCollection"),
        ("Memory", "Memory.v1_7_0"),
        ("SimpleStorageCollection", "SimpleStorageCollection"),
        ("SimpleStorage", "SimpleStorage.v1_2_0"),
        ("StorageCollection", "StorageCollection"),
        ("Storage", "Storage.v1_7_0"),
        ("Drive", "Drive.v1_4_0"),
        (
            "MessageRegistryFileCollection",
            "MessageRegistryFileCollection",
        ),
        ("MessageRegistryFile", "MessageRegistryFile.v1_1_0"),
        ("AttributeRegistry", "AttributeRegistry.v1_3_0"),
        ("EventService", "EventService.v1_7_0"),
        ("EventDestinationCollection", "EventDestinationCollection"),
        ("EventDestination", "EventDestination.v1_7_0"),
        ("UpdateService", "UpdateService.v1_11_0"),
    ];
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <edmx:Edmx xmlns:edmx=\"http://docs.oasis-open.org/odata/ns/edmx\" Version=\"4.0\">\n",
    );
    for (file, versioned) in SCHEMAS {
        xml.push_str(&format!(
            "  <edmx:Reference Uri=\"http://redfish.dmtf.org/schemas/v1/{file}_v1.xml\">\n    \
             <edmx:Include Namespace=\"{file}\"/>\n"
        ));
        if versioned != file {
            xml.push_str(&format!("    <edmx:Include Namespace=\"{versioned}\"/>\n"));
        }
        xml.push_str("  </edmx:Reference>\n");
    }
    xml.push_str(
        "  <edmx:DataServices>\n    <Schema xmlns=\"http://docs.oasis-open.org/odata/ns/edm\" \
         Namespace=\"Service\">\n      <EntityContainer Name=\"Service\" \
         Extends=\"ServiceRoot.v1_5_0.ServiceContainer\"/>\n    </Schema>\n  \
         </edmx:DataServices>\n</edmx:Edmx>\n",
    );
    (
        [(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/xml"),
        )],
        xml,
    )
        .into_response()
}
