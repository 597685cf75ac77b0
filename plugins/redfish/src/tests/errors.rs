//! Tests of the driver's error mapping: what a host refusal means for it, transport failures,
//! bodies that are not what was asked for. (The HTTP statuses and error bodies are the SDK's
//! `ErrorExt::from_status`, tested there.)

use podium_plugin::Error;
use podium_plugin::driver::{PowerAction, PowerState};
use podium_plugin::http::{HttpError, Method};
use serde_json::json;

use super::fake::{Fake, SYSTEM};
use crate::error::{UrlSource, from_transport};

#[test]
fn transport_errors_map_to_cases() {
    let map = |e| from_transport(Method::Get, "/redfish/v1", UrlSource::Service, e);
    assert_eq!(
        map(HttpError::Unreachable("connection refused".into())),
        Error::Unreachable("GET /redfish/v1: connection refused".into())
    );
    assert_eq!(
        map(HttpError::Timeout("after 30s".into())),
        Error::Timeout("GET /redfish/v1: after 30s".into())
    );
    assert_eq!(
        map(HttpError::Tls("unknown issuer".into())),
        Error::Unreachable("TLS: GET /redfish/v1: unknown issuer".into())
    );
    assert!(matches!(
        map(HttpError::TooLarge("over 16 MiB".into())),
        Error::Protocol(_)
    ));
    assert!(matches!(
        map(HttpError::InvalidRequest("bad".into())),
        Error::Internal(_)
    ));
    assert!(matches!(
        map(HttpError::Denied("other host".into())),
        Error::Protocol(_)
    ));
}

#[test]
fn a_refused_system_id_is_invalid_input() {
    let fake = Fake::emulator();
    // The harness, as the host, refuses a URL outside the endpoint.
    let foreign = "https://elsewhere.example/redfish/v1/Systems/1";
    assert!(matches!(
        fake.client().get_power(foreign),
        Err(Error::InvalidInput(m)) if m.starts_with("system-id")
    ));

    // The same refusal for a link the service handed out is the service's fault.
    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |s| {
        s["Actions"]["#ComputerSystem.Reset"]["target"] = json!(foreign);
    });
    assert!(matches!(
        fake.client().set_power(SYSTEM, PowerAction::On),
        Err(Error::Protocol(m)) if m.contains("linked outside its endpoint")
    ));
}

#[test]
fn transport_failures_reach_the_caller() {
    let mut fake = Fake::emulator();
    fake.fail(Method::Get, "/redfish/v1", HttpError::Timeout("30s".into()));
    assert!(matches!(fake.client().discover(), Err(Error::Timeout(_))));
    assert!(matches!(fake.client().probe(), Err(Error::Timeout(_))));
}

#[test]
fn a_resource_that_is_not_an_object_is_a_protocol_error() {
    // An array would fill a struct field by field; it is refused as what it is.
    let mut fake = Fake::emulator();
    fake.answer(Method::Get, SYSTEM, 200, b" [\"On\"]");
    assert!(matches!(
        fake.client().get_power(SYSTEM),
        Err(Error::Protocol(m)) if m.ends_with("the response is not a JSON object")
    ));

    let mut fake = Fake::emulator();
    fake.answer(Method::Get, SYSTEM, 200, b"{\"PowerState\": ");
    assert!(matches!(
        fake.client().get_power(SYSTEM),
        Err(Error::Protocol(m)) if m.contains("the response is not JSON")
    ));
}

#[test]
fn fields_the_driver_does_not_read_are_not_checked() {
    // A number out of range in an OEM section: the whole document is not JSON serde_json would
    // keep, but the power state is read all the same.
    let mut fake = Fake::emulator();
    fake.answer(
        Method::Get,
        SYSTEM,
        200,
        br#"{"PowerState": "On", "Oem": {"Vendor": {"Reading": 1e400}}}"#,
    );
    assert_eq!(fake.client().get_power(SYSTEM).unwrap(), PowerState::On);
}
