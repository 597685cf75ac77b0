//! The driver's calls run natively, as the host makes them, against an in-process Redfish
//! service (point `Host::endpoint` at a real one, sushy-tools for instance, the same way).

use podium_plugin::ErrorExt;
use podium_plugin::driver::PowerState;
use podium_plugin::http::Response;
use podium_plugin::testing::Host;
use serde_json::{Value, json};

use {{crate_name}}::Driver;

// Holds each call to the host's memory limit, as the host does.
#[global_allocator]
static ALLOCATOR: podium_plugin::testing::CountingAllocator =
    podium_plugin::testing::CountingAllocator;

fn service(path: &str) -> Option<Value> {
    Some(match path {
        "/redfish/v1" => json!({"RedfishVersion": "1.5.0", "Systems": {"@odata.id": "/redfish/v1/Systems"}}),
        "/redfish/v1/Systems" => json!({"Members": [{"@odata.id": "/redfish/v1/Systems/1"}]}),
        "/redfish/v1/Systems/1" => json!({
            "Name": "node-1", "UUID": "27946B59-9E44-4FA7-8E91-000000000001", "PowerState": "Off",
            "EthernetInterfaces": {"@odata.id": "/redfish/v1/Systems/1/EthernetInterfaces"}
        }),
        "/redfish/v1/Systems/1/EthernetInterfaces" => {
            json!({"Members": [{"@odata.id": "/redfish/v1/Systems/1/EthernetInterfaces/eth0"}]})
        }
        "/redfish/v1/Systems/1/EthernetInterfaces/eth0" => {
            json!({"Name": "eth0", "MACAddress": "52:54:00:aa:00:01"})
        }
        _ => return None,
    })
}

#[test]
fn probes_and_discovers_the_service() {
    let host = Host::new().in_process(|request| {
        Ok(match service(&request.url) {
            Some(body) => Response { status: 200, headers: vec![], body: body.to_string().into_bytes() },
            None => Response { status: 404, headers: vec![], body: vec![] },
        })
    });
    let driver = host.driver::<Driver>();

    let info = driver.probe().unwrap();
    assert_eq!(info.version.as_deref(), Some("1.5.0"));

    let systems = driver.discover().unwrap();
    assert_eq!(systems.len(), 1);
    assert_eq!(systems[0].name, "node-1");
    assert_eq!(systems[0].uuid.as_deref(), Some("27946b59-9e44-4fa7-8e91-000000000001"));
    assert_eq!(systems[0].nics[0].mac, "52:54:00:aa:00:01");
    assert_eq!(systems[0].power, PowerState::Off);

    // A configuration with a typo is refused, naming the field.
    let refused = driver.validate_config(r#"{"rot": "/redfish/v1"}"#).unwrap_err();
    assert!(refused.message().contains("rot"), "{refused:?}");
}
