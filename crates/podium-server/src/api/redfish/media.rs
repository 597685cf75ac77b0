//! `Managers`, one per system, and virtual media, under the manager and under the system as
//! BMCs serve it: insert and eject are the host's media operations.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::{Value, json};

use podium_app::app::Podium;
use podium_types::views::SystemView;
use podium_types::{HostId, MediaAction, MediaRequest, MediaSlot, MediaType};

use super::systems::system_get;
use super::{
    Answer, ROOT, RedfishError, RfCaller, accepted, chassis_uri, collection, manager_uri, missing,
    object, optional_object, resource, segment, string_param, system_uri,
};

pub(super) async fn manager_list(State(podium): State<Podium>, caller: RfCaller) -> Answer {
    let systems = podium.redfish_systems(caller.caller()).await?;
    Ok(collection(
        "#ManagerCollection.ManagerCollection",
        &format!("{ROOT}/Managers"),
        "Manager Collection",
        systems.iter().map(|s| manager_uri(&s.id)).collect(),
    ))
}

/// Each system's manager: Podium standing for its BMC.
pub(super) async fn manager_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    let uri = manager_uri(&s.id);
    let mut body = json!({
        "@odata.type": "#Manager.v1_10_0.Manager",
        "@odata.id": uri,
        "Id": s.id,
        "Name": format!("Manager of {}", s.name),
        "ManagerType": "BMC",
        "Status": {"State": "Enabled", "Health": "OK"},
        "VirtualMedia": {"@odata.id": format!("{uri}/VirtualMedia")},
        "Links": {
            "ManagerForServers": [{"@odata.id": system_uri(&s.id)}],
            "ManagerForChassis": [{"@odata.id": chassis_uri(&s.id)}],
        },
    });
    if let Some(version) = &s.bmc_version {
        body["FirmwareVersion"] = json!(version);
    }
    Ok(resource(body))
}

pub(super) fn media_type_name(t: MediaType) -> &'static str {
    match t {
        MediaType::Cd => "CD",
        MediaType::Dvd => "DVD",
        MediaType::Floppy => "Floppy",
        MediaType::Usb => "USBStick",
    }
}

pub(super) fn media_list(s: &SystemView, base: &str) -> Response {
    let uri = format!("{base}/VirtualMedia");
    collection(
        "#VirtualMediaCollection.VirtualMediaCollection",
        &uri,
        "Virtual Media Collection",
        s.media_slots
            .iter()
            .map(|m| format!("{uri}/{}", segment(&m.id)))
            .collect(),
    )
}

pub(super) fn media_slot<'a>(
    s: &'a SystemView,
    base: &str,
    slot: &str,
) -> Result<(&'a MediaSlot, String), RedfishError> {
    let uri = format!("{base}/VirtualMedia/{slot}");
    let m = s
        .media_slots
        .iter()
        .find(|m| segment(&m.id) == slot)
        .ok_or_else(|| missing(&uri))?;
    Ok((m, uri))
}

pub(super) fn media(m: &MediaSlot, uri: &str) -> Value {
    let image_name = m
        .image
        .as_deref()
        .and_then(|i| i.rsplit('/').next())
        .filter(|n| !n.is_empty());
    json!({
        "@odata.type": "#VirtualMedia.v1_4_0.VirtualMedia",
        "@odata.id": uri,
        "Id": segment(&m.id),
        "Name": format!("Virtual media {}", m.id),
        "MediaTypes": m.media_types.iter().map(|t| media_type_name(*t)).collect::<Vec<_>>(),
        "Image": m.image,
        "ImageName": image_name,
        "Inserted": m.inserted,
        "WriteProtected": true,
        "ConnectedVia": if m.inserted { "URI" } else { "NotConnected" },
        "Actions": {
            "#VirtualMedia.InsertMedia": {"target": format!("{uri}/Actions/VirtualMedia.InsertMedia")},
            "#VirtualMedia.EjectMedia": {"target": format!("{uri}/Actions/VirtualMedia.EjectMedia")},
        },
    })
}

pub(super) async fn media_action(
    podium: &Podium,
    caller: &RfCaller,
    base: impl Fn(&HostId) -> String,
    (id, slot, action): (String, String, String),
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let s = system_get(podium, caller, id).await?;
    let base = base(&s.id);
    let (m, uri) = media_slot(&s, &base, &slot)?;
    let media_type = m.media_types.first().copied().unwrap_or(MediaType::Cd);
    let request = match action.as_str() {
        "VirtualMedia.InsertMedia" => {
            MediaAction::Insert(insert_media(body)?.with_type(media_type))
        }
        "VirtualMedia.EjectMedia" => {
            let body = optional_object(body)?;
            if let Some(k) = body.keys().find(|k| !k.starts_with('@')) {
                return Err(RedfishError::parameter_unknown(&action, k));
            }
            MediaAction::Eject { media_type }
        }
        _ => return Err(missing(&format!("{uri}/Actions/{action}"))),
    };
    let op = podium
        .redfish_media(caller.caller(), &s.id, request)
        .await?;
    Ok(accepted(&op))
}

pub(super) struct Insert {
    image: String,
    write_protected: bool,
}

impl Insert {
    fn with_type(self, media_type: MediaType) -> MediaRequest {
        MediaRequest {
            image_url: self.image,
            media_type,
            write_protected: self.write_protected,
        }
    }
}

/// `InsertMedia`'s parameters: `Image` (an http or https URL the BMC downloads), and the
/// optional ones clients send with the values Podium can honour.
pub(super) fn insert_media(body: Result<Bytes, BytesRejection>) -> Result<Insert, RedfishError> {
    const ACTION: &str = "VirtualMedia.InsertMedia";
    let body = object(body)?;
    let mut image = None;
    let mut write_protected = true;
    for (key, value) in &body {
        match key.as_str() {
            "Image" => image = Some(string_param(ACTION, key, value)?.to_owned()),
            "Inserted" => {
                if value != &json!(true) {
                    return Err(RedfishError::parameter_value(ACTION, key, value, "true"));
                }
            }
            "WriteProtected" => {
                write_protected = value.as_bool().ok_or_else(|| {
                    RedfishError::parameter_value(ACTION, key, value, "true, false")
                })?;
            }
            "TransferProtocolType" => {
                let v = string_param(ACTION, key, value)?;
                if !matches!(v, "HTTP" | "HTTPS") {
                    return Err(RedfishError::parameter_value(
                        ACTION,
                        key,
                        value,
                        "HTTP, HTTPS",
                    ));
                }
            }
            "TransferMethod" => {
                let v = string_param(ACTION, key, value)?;
                // The BMC downloads the image: nothing is uploaded through Podium.
                if v != "Stream" {
                    return Err(RedfishError::parameter_value(ACTION, key, value, "Stream"));
                }
            }
            k if k.starts_with('@') => {}
            k => return Err(RedfishError::parameter_unknown(ACTION, k)),
        }
    }
    let image = image.ok_or_else(|| RedfishError::parameter_missing(ACTION, "Image"))?;
    Ok(Insert {
        image,
        write_protected,
    })
}

pub(super) async fn system_media_list(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    Ok(media_list(&s, &system_uri(&s.id)))
}

pub(super) async fn manager_media_list(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    Ok(media_list(&s, &manager_uri(&s.id)))
}

pub(super) async fn system_media_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path((id, slot)): Path<(String, String)>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    let (m, uri) = media_slot(&s, &system_uri(&s.id), &slot)?;
    Ok(resource(media(m, &uri)))
}

pub(super) async fn manager_media_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path((id, slot)): Path<(String, String)>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    let (m, uri) = media_slot(&s, &manager_uri(&s.id), &slot)?;
    Ok(resource(media(m, &uri)))
}

pub(super) async fn system_media_action(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(path): Path<(String, String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    media_action(&podium, &caller, system_uri, path, body).await
}

pub(super) async fn manager_media_action(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(path): Path<(String, String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    media_action(&podium, &caller, manager_uri, path, body).await
}
