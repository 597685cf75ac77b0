//! The store's own formats for what it keeps as JSON text, so that a change of the API or of
//! the model does not change what is on disk: an operation queued before an upgrade is read
//! back by the release after it.
//!
//! An operation's `request` is format 1: the JSON object each kind has always been written as,
//! with no version field (`{"action": "on"}`, `{"target": "pxe", ...}`, `{}`). A later format
//! adds `"format": 2` and is read beside this one; format 1 is then still read, never written.
//!
//! Not here: an operation's `result` and `progress` are kept as the model's outcome types write
//! them (`podium_types::OperationResult`), which read back what earlier releases wrote (a field
//! added since has a default; a shape none reads is kept as it was, `Unread`).

use std::collections::BTreeMap;

use podium_types::{
    BiosAction, BiosChange, BiosValue, BootMode, BootPersistence, BootSettings, BootTarget,
    MediaAction, MediaRequest, MediaType, OperationKind, OperationRequest, PowerAction,
};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

#[derive(Serialize, Deserialize)]
struct Power {
    action: PowerAction,
}

#[derive(Serialize, Deserialize)]
struct Boot {
    target: BootTarget,
    persistence: BootPersistence,
    #[serde(default)]
    mode: Option<BootMode>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
enum Media {
    Insert {
        image_url: String,
        #[serde(default = "cd")]
        media_type: MediaType,
        #[serde(default = "yes")]
        write_protected: bool,
    },
    Eject {
        #[serde(default = "cd")]
        media_type: MediaType,
    },
}

fn cd() -> MediaType {
    MediaType::Cd
}

fn yes() -> bool {
    true
}

/// A `bios` request: the values as JSON's own types (a string, an integer, a boolean), the apply
/// time by its name.
#[derive(Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
enum Bios {
    Set {
        attributes: BTreeMap<String, serde_json::Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        apply_time: Option<String>,
    },
    Reset,
}

#[derive(Serialize, Deserialize)]
struct SecureBoot {
    enabled: bool,
}

#[derive(Serialize, Deserialize)]
struct FirmwareUpdate {
    image_url: String,
    targets: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct Provision {
    #[serde(default)]
    image: Option<podium_types::requests::ImageParams>,
}

/// An operation's request as stored (format 1).
pub(crate) fn request_encode(request: &OperationRequest) -> String {
    let json = match request {
        OperationRequest::Register
        | OperationRequest::Inspect
        | OperationRequest::Sync
        | OperationRequest::Deprovision => serde_json::to_string(&Empty {}),
        OperationRequest::Power(action) => serde_json::to_string(&Power { action: *action }),
        OperationRequest::Boot(b) => serde_json::to_string(&Boot {
            target: b.target,
            persistence: b.persistence,
            mode: b.mode,
        }),
        OperationRequest::Media(MediaAction::Insert(m)) => serde_json::to_string(&Media::Insert {
            image_url: m.image_url.clone(),
            media_type: m.media_type,
            write_protected: m.write_protected,
        }),
        OperationRequest::Media(MediaAction::Eject { media_type }) => {
            serde_json::to_string(&Media::Eject {
                media_type: *media_type,
            })
        }
        OperationRequest::Bios(BiosAction::Set(change)) => serde_json::to_string(&Bios::Set {
            attributes: change
                .attributes
                .iter()
                .map(|(name, value)| {
                    let value = match value {
                        BiosValue::Text(t) => serde_json::Value::from(t.as_str()),
                        BiosValue::Integer(i) => serde_json::Value::from(*i),
                        BiosValue::Boolean(b) => serde_json::Value::from(*b),
                    };
                    (name.clone(), value)
                })
                .collect(),
            apply_time: change.apply_time.map(|t| t.as_str().to_owned()),
        }),
        OperationRequest::Bios(BiosAction::Reset) => serde_json::to_string(&Bios::Reset),
        OperationRequest::SecureBoot { enabled } => {
            serde_json::to_string(&SecureBoot { enabled: *enabled })
        }
        OperationRequest::FirmwareUpdate(u) => serde_json::to_string(&FirmwareUpdate {
            image_url: u.image_url.clone(),
            targets: u.targets.clone(),
        }),
        OperationRequest::Provision { image } => serde_json::to_string(&Provision {
            image: image.as_deref().cloned(),
        }),
    };
    json.expect("a request serializes")
}

/// An operation's request read back from its `kind` and `request` columns.
pub(crate) fn request_decode(kind: &str, text: &str) -> Result<OperationRequest, String> {
    let kind: OperationKind = kind.parse().map_err(|e| format!("{e}"))?;
    let bad = |e: serde_json::Error| format!("its {kind} request `{text}` is unreadable: {e}");
    let empty = |r: OperationRequest| -> Result<OperationRequest, String> {
        // Format 1 wrote `{}` for these kinds; anything else in it was never written.
        let _: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).map_err(bad)?;
        Ok(r)
    };
    match kind {
        OperationKind::Register => empty(OperationRequest::Register),
        OperationKind::Inspect => empty(OperationRequest::Inspect),
        OperationKind::Sync => empty(OperationRequest::Sync),
        OperationKind::Deprovision => empty(OperationRequest::Deprovision),
        OperationKind::Power => {
            let p: Power = serde_json::from_str(text).map_err(bad)?;
            Ok(OperationRequest::Power(p.action))
        }
        OperationKind::Boot => {
            let b: Boot = serde_json::from_str(text).map_err(bad)?;
            Ok(OperationRequest::Boot(BootSettings {
                target: b.target,
                persistence: b.persistence,
                mode: b.mode,
            }))
        }
        OperationKind::Media => Ok(OperationRequest::Media(
            match serde_json::from_str(text).map_err(bad)? {
                Media::Insert {
                    image_url,
                    media_type,
                    write_protected,
                } => MediaAction::Insert(MediaRequest {
                    image_url,
                    media_type,
                    write_protected,
                }),
                Media::Eject { media_type } => MediaAction::Eject { media_type },
            },
        )),
        OperationKind::Bios => Ok(OperationRequest::Bios(
            match serde_json::from_str(text).map_err(bad)? {
                Bios::Reset => BiosAction::Reset,
                Bios::Set {
                    attributes,
                    apply_time,
                } => {
                    let unreadable = |what: String| format!("its bios request `{text}`: {what}");
                    let attributes = attributes
                        .into_iter()
                        .map(|(name, value)| {
                            let value = match value {
                                serde_json::Value::String(t) => BiosValue::Text(t),
                                serde_json::Value::Bool(b) => BiosValue::Boolean(b),
                                serde_json::Value::Number(n) if n.is_i64() => {
                                    BiosValue::Integer(n.as_i64().unwrap_or_default())
                                }
                                other => {
                                    return Err(unreadable(format!("`{name}` is {other}")));
                                }
                            };
                            Ok((name, value))
                        })
                        .collect::<Result<_, String>>()?;
                    let apply_time = apply_time
                        .map(|t| t.parse())
                        .transpose()
                        .map_err(|e| unreadable(format!("{e}")))?;
                    BiosAction::Set(BiosChange {
                        attributes,
                        apply_time,
                    })
                }
            },
        )),
        OperationKind::SecureBoot => {
            let s: SecureBoot = serde_json::from_str(text).map_err(bad)?;
            Ok(OperationRequest::SecureBoot { enabled: s.enabled })
        }
        OperationKind::FirmwareUpdate => {
            let u: FirmwareUpdate = serde_json::from_str(text).map_err(bad)?;
            Ok(OperationRequest::FirmwareUpdate(
                podium_types::FirmwareUpdate {
                    image_url: u.image_url,
                    targets: u.targets,
                },
            ))
        }
        OperationKind::Provision => {
            let p: Provision = serde_json::from_str(text).map_err(bad)?;
            Ok(OperationRequest::Provision {
                image: p.image.map(Box::new),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests exactly as the releases before this module wrote them (the API's bodies, stored
    /// as they came), each read back as what it asked for.
    #[test]
    fn requests_written_by_earlier_releases_read_back() {
        let cases = [
            ("register", "{}", OperationRequest::Register),
            ("inspect", "{}", OperationRequest::Inspect),
            ("sync", "{}", OperationRequest::Sync),
            ("deprovision", "{}", OperationRequest::Deprovision),
            (
                "power",
                r#"{"action":"reboot"}"#,
                OperationRequest::Power(PowerAction::ForceRestart),
            ),
            (
                "power",
                r#"{"action":"graceful_shutdown"}"#,
                OperationRequest::Power(PowerAction::GracefulShutdown),
            ),
            (
                "boot",
                r#"{"target":"uefi_http","persistence":"once","mode":null}"#,
                OperationRequest::Boot(BootSettings {
                    target: BootTarget::UefiHttp,
                    persistence: BootPersistence::Once,
                    mode: None,
                }),
            ),
            (
                "media",
                r#"{"action":"insert","image_url":"http://i/x.iso","media_type":"usb","write_protected":false}"#,
                OperationRequest::Media(MediaAction::Insert(MediaRequest {
                    image_url: "http://i/x.iso".into(),
                    media_type: MediaType::Usb,
                    write_protected: false,
                })),
            ),
            (
                "media",
                r#"{"action":"eject","media_type":"cd"}"#,
                OperationRequest::Media(MediaAction::Eject {
                    media_type: MediaType::Cd,
                }),
            ),
            (
                "bios",
                r#"{"action":"set","attributes":{"ProcTurboMode":"Disabled","NumCores":12,"QuietBoot":false},"apply_time":"on_reset"}"#,
                OperationRequest::Bios(BiosAction::Set(BiosChange {
                    attributes: BTreeMap::from([
                        ("ProcTurboMode".into(), BiosValue::Text("Disabled".into())),
                        ("NumCores".into(), BiosValue::Integer(12)),
                        ("QuietBoot".into(), BiosValue::Boolean(false)),
                    ]),
                    apply_time: Some(podium_types::ApplyTime::OnReset),
                })),
            ),
            (
                "bios",
                r#"{"action":"reset"}"#,
                OperationRequest::Bios(BiosAction::Reset),
            ),
            (
                "secure_boot",
                r#"{"enabled":true}"#,
                OperationRequest::SecureBoot { enabled: true },
            ),
            (
                "firmware_update",
                r#"{"image_url":"http://i/bios.bin","targets":["/redfish/v1/Systems/1"]}"#,
                OperationRequest::FirmwareUpdate(podium_types::FirmwareUpdate {
                    image_url: "http://i/bios.bin".into(),
                    targets: vec!["/redfish/v1/Systems/1".into()],
                }),
            ),
            (
                "provision",
                r#"{"image":{"url":"http://i/x.iso","checksum":null}}"#,
                OperationRequest::Provision {
                    image: Some(Box::new(podium_types::requests::ImageParams {
                        url: "http://i/x.iso".into(),
                        checksum: None,
                        checksum_type: None,
                        format: None,
                        root_device: None,
                    })),
                },
            ),
        ];
        for (kind, text, want) in cases {
            let got = request_decode(kind, text).unwrap_or_else(|e| panic!("{kind} {text}: {e}"));
            assert_eq!(got, want, "{kind} {text}");
            // And what is written now reads back the same.
            assert_eq!(request_decode(kind, &request_encode(&got)), Ok(want));
        }
    }

    #[test]
    fn an_unknown_kind_or_unreadable_request_is_named() {
        let e = request_decode("teleport", "{}").unwrap_err();
        assert!(
            e.starts_with("`teleport` is not an operation kind (one of register,"),
            "{e}"
        );
        let e = request_decode("power", r#"{"action":"explode"}"#).unwrap_err();
        assert!(e.starts_with("its power request"), "{e}");
    }
}
