//! `EventService`: a caller's subscriptions (`Subscriptions`), to which Podium pushes, as
//! Redfish `Event`s, the changes of the hosts and operations the caller may see
//! (`podium_app::subscriptions`).

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::header::LOCATION;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use podium_app::app::Podium;
use podium_app::subscriptions::EVENT_TYPES;
use podium_types::views::{SubscriptionCreate, SubscriptionView};
use podium_types::{Secret, SubscriptionId};

use super::{
    Answer, ROOT, RedfishError, RfCaller, collection, no_content, object, resource, string_of,
};

fn subscriptions_uri() -> String {
    format!("{ROOT}/EventService/Subscriptions")
}

fn subscription_uri(id: &SubscriptionId) -> String {
    format!("{}/{id}", subscriptions_uri())
}

pub(super) async fn event_service(_caller: RfCaller) -> Response {
    resource(json!({
        "@odata.type": "#EventService.v1_7_0.EventService",
        "@odata.id": format!("{ROOT}/EventService"),
        "Id": "EventService",
        "Name": "Event Service",
        "ServiceEnabled": true,
        "Status": {"State": "Enabled", "Health": "OK"},
        "DeliveryRetryAttempts": 5,
        "DeliveryRetryIntervalSeconds": 1,
        "EventTypesForSubscription": EVENT_TYPES,
        "Subscriptions": {"@odata.id": subscriptions_uri()},
        "Actions": {},
    }))
}

/// A subscription as Redfish shows it: `HttpHeaders` is always `null` (they are never shown);
/// `Oem.Podium` says how far delivery came and why its last try failed.
fn subscription(s: &SubscriptionView) -> Value {
    json!({
        "@odata.type": "#EventDestination.v1_7_0.EventDestination",
        "@odata.id": subscription_uri(&s.id),
        "Id": s.id,
        "Name": "Event Subscription",
        "Destination": s.destination,
        "Context": s.context,
        "Protocol": "Redfish",
        "SubscriptionType": "RedfishEvent",
        "EventTypes": if s.event_types.is_empty() { json!(EVENT_TYPES) } else { json!(s.event_types) },
        "HttpHeaders": Value::Null,
        "Oem": {"Podium": {
            "DeliveredThrough": s.delivered_through,
            "HasHttpHeaders": s.has_headers,
            "LastError": s.last_error,
        }},
    })
}

pub(super) async fn subscription_list(State(podium): State<Podium>, caller: RfCaller) -> Answer {
    let subscriptions = podium.subscription_list(caller.caller()).await?;
    Ok(collection(
        "#EventDestinationCollection.EventDestinationCollection",
        &subscriptions_uri(),
        "Event Subscriptions",
        subscriptions
            .iter()
            .map(|s| subscription_uri(&s.id))
            .collect(),
    ))
}

/// `POST Subscriptions`: `Destination` (required), `Protocol` (`Redfish`), `Context`,
/// `EventTypes`, `HttpHeaders` (sent with each event, never shown); 201 with the subscription
/// and its `Location`.
pub(super) async fn subscription_create(
    State(podium): State<Podium>,
    caller: RfCaller,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let mut request = SubscriptionCreate {
        destination: String::new(),
        context: String::new(),
        event_types: Vec::new(),
        headers: Vec::new(),
    };
    let mut destination = None;
    for (key, value) in &object(body)? {
        match key.as_str() {
            "Destination" => destination = Some(string_of(key, value)?.to_owned()),
            "Context" => request.context = string_of(key, value)?.to_owned(),
            "Protocol" => {
                if string_of(key, value)? != "Redfish" {
                    return Err(RedfishError::property_value(key, value, "Redfish"));
                }
            }
            "SubscriptionType" => {
                if string_of(key, value)? != "RedfishEvent" {
                    return Err(RedfishError::property_value(key, value, "RedfishEvent"));
                }
            }
            "EventTypes" => {
                let types = value
                    .as_array()
                    .ok_or_else(|| RedfishError::property_type(key, "an array"))?;
                for t in types {
                    request
                        .event_types
                        .push(string_of("EventTypes", t)?.to_owned());
                }
            }
            "HttpHeaders" => request.headers = headers(value)?,
            k if k.starts_with('@') => {}
            k => return Err(RedfishError::property_unknown(k)),
        }
    }
    request.destination =
        destination.ok_or_else(|| RedfishError::property_missing("Destination"))?;
    let view = podium.subscription_create(caller.caller(), request).await?;
    let mut response = (StatusCode::CREATED, Json(subscription(&view))).into_response();
    if let Ok(v) = HeaderValue::from_str(&subscription_uri(&view.id)) {
        response.headers_mut().insert(LOCATION, v);
    }
    Ok(response)
}

/// `HttpHeaders`: an object of names and string values, or (as sushy and older clients send
/// it) an array of such objects.
fn headers(value: &Value) -> Result<Vec<(String, Secret)>, RedfishError> {
    let objects: Vec<&serde_json::Map<String, Value>> = match value {
        Value::Null => Vec::new(),
        Value::Object(o) => vec![o],
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i.as_object()
                    .ok_or_else(|| RedfishError::property_type("HttpHeaders", "an object"))
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(RedfishError::property_type("HttpHeaders", "an object")),
    };
    let mut out = Vec::new();
    for o in objects {
        for (name, v) in o {
            let text = v.as_str().ok_or_else(|| {
                RedfishError::property_type(&format!("HttpHeaders/{name}"), "a string")
            })?;
            out.push((name.clone(), Secret::new(text.to_owned())));
        }
    }
    Ok(out)
}

pub(super) async fn subscription_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = podium
        .subscription_view(caller.caller(), &SubscriptionId::from(id))
        .await?;
    Ok(resource(subscription(&s)))
}

pub(super) async fn subscription_delete(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    podium
        .subscription_delete(caller.caller(), &SubscriptionId::from(id))
        .await?;
    Ok(no_content())
}
