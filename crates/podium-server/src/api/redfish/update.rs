//! `UpdateService`: `SimpleUpdate` of a system's BIOS from an image, as Ironic's redfish firmware
//! interface and sushy send it (the system as the target), answered 202 with the operation's
//! task, whose `@odata.id` a client follows as a `Task`. A tenant's, where its site lets tenants
//! update firmware (`podium_app::redfish`).

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::response::Response;
use serde_json::json;

use podium_app::app::Podium;
use podium_types::HostId;

use super::{Answer, ROOT, RedfishError, RfCaller, accepted, object, resource, string_param};

const ACTION: &str = "UpdateService.SimpleUpdate";
/// The transfer protocols `SimpleUpdate` takes: the BMC downloads the image by its URL.
const PROTOCOLS: [&str; 2] = ["HTTP", "HTTPS"];

pub(super) async fn update_service(_caller: RfCaller) -> Response {
    resource(json!({
        "@odata.type": "#UpdateService.v1_11_0.UpdateService",
        "@odata.id": format!("{ROOT}/UpdateService"),
        "Id": "UpdateService",
        "Name": "Update Service",
        "ServiceEnabled": true,
        "Status": {"State": "Enabled", "Health": "OK"},
        "Actions": {
            "#UpdateService.SimpleUpdate": {
                "target": format!("{ROOT}/UpdateService/Actions/{ACTION}"),
                "TransferProtocol@Redfish.AllowableValues": PROTOCOLS,
            },
        },
    }))
}

/// `SimpleUpdate` `{"ImageURI", "TransferProtocol"?, "Targets"?}`: the BIOS of the one system
/// `Targets` names (the caller's only system where it names none) updated from the image.
pub(super) async fn simple_update(
    State(podium): State<Podium>,
    caller: RfCaller,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let (mut image, mut targets) = (None, Vec::new());
    for (key, value) in &object(body)? {
        match key.as_str() {
            "ImageURI" => image = Some(string_param(ACTION, key, value)?.to_owned()),
            "TransferProtocol" => {
                let protocol = string_param(ACTION, key, value)?;
                if !PROTOCOLS.contains(&protocol) {
                    return Err(RedfishError::parameter_value(
                        ACTION,
                        key,
                        value,
                        &PROTOCOLS.join(", "),
                    ));
                }
            }
            "Targets" => {
                let items = value.as_array().ok_or_else(|| {
                    RedfishError::parameter_value(ACTION, key, value, "a list of systems")
                })?;
                for item in items {
                    let uri = string_param(ACTION, key, item)?;
                    let id = uri
                        .trim_end_matches('/')
                        .strip_prefix(&format!("{ROOT}/Systems/"))
                        .filter(|id| !id.is_empty() && !id.contains('/'))
                        .ok_or_else(|| {
                            RedfishError::parameter_value(ACTION, key, item, "a system's URI")
                        })?;
                    targets.push(HostId::from(id.to_owned()));
                }
            }
            k if k.starts_with('@') => {}
            k => return Err(RedfishError::parameter_unknown(ACTION, k)),
        }
    }
    let image = image.ok_or_else(|| RedfishError::parameter_missing(ACTION, "ImageURI"))?;
    let op = podium
        .redfish_simple_update(caller.caller(), image, targets)
        .await?;
    Ok(accepted(&op))
}
