//! Tests of `validate-config`: what is accepted, and that each rejection names the field.

use crate::config::{Config, DEFAULT_ROOT};
use podium_plugin::Error;

fn rejection(text: &str) -> String {
    match Config::parse(text) {
        Err(Error::InvalidConfig(message)) => message,
        other => panic!("{text}: expected invalid-config, got {other:?}"),
    }
}

#[test]
fn empty_object_is_the_default() {
    let config = Config::parse("{}").unwrap();
    assert_eq!(config.root, DEFAULT_ROOT);
    assert_eq!(config.system_ids, None);
}

#[test]
fn accepts_root_and_system_ids() {
    let config = Config::parse(
        r#"{"root": "/redfish/v1/", "system_ids": ["1", " /redfish/v1/Systems/2 "]}"#,
    )
    .unwrap();
    assert_eq!(config.root, "/redfish/v1");
    assert_eq!(
        config.system_ids,
        Some(vec!["1".to_owned(), "/redfish/v1/Systems/2".to_owned()])
    );
    assert_eq!(Config::parse(r#"{"root": "/"}"#).unwrap().root, "/");
    assert_eq!(
        Config::parse(r#"{"system_ids": []}"#).unwrap().system_ids,
        Some(vec![])
    );
}

#[test]
fn unknown_keys_are_named() {
    let message = rejection(r#"{"root": "/redfish/v1", "password": "x"}"#);
    assert!(message.starts_with("password:"), "{message}");
}

#[test]
fn wrong_types_are_named() {
    assert!(rejection(r#"{"root": 1}"#).starts_with("root:"));
    assert!(rejection(r#"{"root": null}"#).starts_with("root:"));
    assert!(rejection(r#"{"system_ids": "1"}"#).starts_with("system_ids:"));
    assert!(rejection(r#"{"system_ids": ["1", 2]}"#).starts_with("system_ids[1]:"));
    assert!(rejection(r#"{"system_ids": ["1", " "]}"#).starts_with("system_ids[1]:"));
}

#[test]
fn root_must_be_a_path() {
    for root in [
        "redfish/v1",
        "https://bmc/redfish/v1",
        "//bmc/redfish/v1",
        "",
        "/red fish",
    ] {
        let message = rejection(&format!(r#"{{"root": {root:?}}}"#));
        assert!(message.starts_with("root:"), "{root}: {message}");
    }
}

#[test]
fn not_an_object_or_not_json() {
    rejection("[]");
    rejection("\"x\"");
    rejection("{");
}

#[test]
fn system_ids_select_by_id_or_path() {
    let config = Config::parse(r#"{"system_ids": ["1", "/redfish/v1/Systems/b/"]}"#).unwrap();
    assert!(config.selects("/redfish/v1/Systems/1"));
    assert!(config.selects("/redfish/v1/Systems/1/"));
    assert!(config.selects("/redfish/v1/Systems/b"));
    assert!(!config.selects("/redfish/v1/Systems/11"));
    assert!(!config.selects("/redfish/v1/Chassis/b"));
    assert!(Config::default().selects("/anything"));
}
