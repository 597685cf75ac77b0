//! Tests of the error mapping: transport failures, HTTP statuses and Redfish error bodies.

use serde_json::json;

use super::fake::{Fake, SYSTEM, fixture};
use crate::error::{MAX_MESSAGE, UrlSource, from_status, from_transport};
use crate::exports::podium::plugin::driver::{PowerAction, PowerState};
use crate::podium::plugin::types::{Error, RemoteError};
use crate::transport::{Method, Response, TransportError};

fn status(code: u16, body: &str) -> Error {
    from_status(
        Method::Get,
        "/redfish/v1/Systems/1",
        &Response {
            status: code,
            body: body.as_bytes().to_vec(),
        },
    )
}

#[test]
fn statuses_map_to_cases() {
    let error_body = fixture("error_400_patch").to_string();
    let at = "GET /redfish/v1/Systems/1: Empty or malformed patch";
    assert_eq!(status(401, &error_body), Error::Unauthorized(at.to_owned()));
    assert_eq!(status(403, &error_body), Error::Unauthorized(at.to_owned()));
    assert_eq!(status(404, &error_body), Error::NotFound(at.to_owned()));
    for code in [400, 415, 422] {
        assert_eq!(
            status(code, &error_body),
            Error::InvalidInput(at.to_owned())
        );
    }
    for code in [405, 501] {
        assert_eq!(status(code, &error_body), Error::Unsupported(at.to_owned()));
    }
    assert_eq!(status(409, &error_body), Error::Conflict(at.to_owned()));
    for code in [500, 503, 412, 302] {
        assert_eq!(
            status(code, &error_body),
            Error::Remote(RemoteError {
                status: code,
                message: at.to_owned()
            })
        );
    }
}

#[test]
fn extended_info_messages_are_appended() {
    // The shape DMTF's examples and most BMCs use.
    let body = json!({"error": {
        "code": "Base.1.0.GeneralError",
        "message": "A general error has occurred. See ExtendedInfo for more information.",
        "@Message.ExtendedInfo": [
            {"MessageId": "Base.1.8.PropertyValueNotInList",
             "Message": "The value Usb for the property BootSourceOverrideTarget is not in the list of acceptable values."},
            {"MessageId": "Base.1.8.PropertyMissing"},
            {"MessageId": "Base.1.8.ResourceInUse", "Message": "The change could not be made because the resource is in use."}
        ]
    }});
    assert_eq!(
        status(400, &body.to_string()),
        Error::InvalidInput(
            "GET /redfish/v1/Systems/1: A general error has occurred. See ExtendedInfo for more information.; \
             The value Usb for the property BootSourceOverrideTarget is not in the list of acceptable values.; \
             The change could not be made because the resource is in use."
                .to_owned()
        )
    );
}

#[test]
fn without_a_redfish_body_the_status_line() {
    assert_eq!(
        status(401, ""),
        Error::Unauthorized("GET /redfish/v1/Systems/1: HTTP 401 Unauthorized".to_owned())
    );
    assert_eq!(
        status(503, "<html>\n  <body>busy</body>\n</html>"),
        Error::Remote(RemoteError {
            status: 503,
            message: "GET /redfish/v1/Systems/1: HTTP 503 Service Unavailable: <html> <body>busy</body> </html>"
                .to_owned()
        })
    );
    assert_eq!(
        status(599, r#"{"error": {}}"#),
        Error::Remote(RemoteError {
            status: 599,
            message: r#"GET /redfish/v1/Systems/1: HTTP 599: {"error": {}}"#.to_owned()
        })
    );
}

#[test]
fn long_bodies_are_cut() {
    let long = "é".repeat(2_000);
    let Error::Remote(RemoteError { message, .. }) = status(500, &long) else {
        panic!("expected remote");
    };
    let quoted = message.split(": ").nth(2).unwrap();
    assert_eq!(quoted.chars().count(), MAX_MESSAGE + 1); // and the ellipsis
    assert!(quoted.ends_with('…'));

    let body = json!({"error": {"message": "x".repeat(5_000)}}).to_string();
    let Error::Remote(RemoteError { message, .. }) = status(500, &body) else {
        panic!("expected remote");
    };
    assert!(message.len() < MAX_MESSAGE + 100, "{}", message.len());
}

#[test]
fn transport_errors_map_to_cases() {
    let map = |e| from_transport(Method::Get, "/redfish/v1", UrlSource::Service, e);
    assert_eq!(
        map(TransportError::Unreachable("connection refused".into())),
        Error::Unreachable("GET /redfish/v1: connection refused".into())
    );
    assert_eq!(
        map(TransportError::Timeout("after 30s".into())),
        Error::Timeout("GET /redfish/v1: after 30s".into())
    );
    assert_eq!(
        map(TransportError::Tls("unknown issuer".into())),
        Error::Unreachable("TLS: GET /redfish/v1: unknown issuer".into())
    );
    assert!(matches!(
        map(TransportError::TooLarge("over 16 MiB".into())),
        Error::Protocol(_)
    ));
    assert!(matches!(
        map(TransportError::InvalidRequest("bad".into())),
        Error::Internal(_)
    ));
    assert!(matches!(
        map(TransportError::Denied("other host".into())),
        Error::Protocol(_)
    ));
}

#[test]
fn a_refused_system_id_is_invalid_input() {
    let mut fake = Fake::emulator();
    let foreign = "https://elsewhere.example/redfish/v1/Systems/1";
    fake.fail(
        Method::Get,
        foreign,
        TransportError::Denied("outside the endpoint".into()),
    );
    assert!(matches!(
        fake.client().get_power(foreign),
        Err(Error::InvalidInput(m)) if m.starts_with("system-id")
    ));

    // The same refusal for a link the service handed out is the service's fault.
    let mut fake = Fake::emulator();
    fake.edit(SYSTEM, |s| {
        s["Actions"]["#ComputerSystem.Reset"]["target"] = json!(foreign);
    });
    fake.fail(
        Method::Post,
        foreign,
        TransportError::Denied("outside the endpoint".into()),
    );
    assert!(matches!(
        fake.client().set_power(SYSTEM, PowerAction::On),
        Err(Error::Protocol(m)) if m.contains("linked outside its endpoint")
    ));
}

#[test]
fn transport_failures_reach_the_caller() {
    let mut fake = Fake::emulator();
    fake.fail(
        Method::Get,
        "/redfish/v1",
        TransportError::Timeout("30s".into()),
    );
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
