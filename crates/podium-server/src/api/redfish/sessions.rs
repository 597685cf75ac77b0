//! `SessionService`: sessions opened with a Podium token and ended by their owner (or a token
//! that may write), as Redfish clients log in.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::header::LOCATION;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use podium_app::app::Podium;
use podium_app::redfish::{RedfishCredential, SESSION_TIMEOUT_SECS};
use podium_types::SessionId;
use podium_types::views::SessionView;

use super::{
    Answer, ROOT, RedfishError, RfCaller, X_AUTH_TOKEN, collection, no_content, object, resource,
    string_of,
};

pub(super) async fn session_service(_caller: RfCaller) -> Response {
    resource(json!({
        "@odata.type": "#SessionService.v1_1_8.SessionService",
        "@odata.id": format!("{ROOT}/SessionService"),
        "Id": "SessionService",
        "Name": "Session Service",
        "ServiceEnabled": true,
        "SessionTimeout": SESSION_TIMEOUT_SECS,
        "Status": {"State": "Enabled", "Health": "OK"},
        "Sessions": {"@odata.id": format!("{ROOT}/SessionService/Sessions")},
    }))
}

pub(super) fn session_uri(id: &SessionId) -> String {
    format!("{ROOT}/SessionService/Sessions/{id}")
}

pub(super) fn session(s: &SessionView) -> Value {
    json!({
        "@odata.type": "#Session.v1_3_0.Session",
        "@odata.id": session_uri(&s.id),
        "Id": s.id,
        "Name": "User Session",
        "UserName": s.user_name,
        "CreatedTime": s.created_at,
    })
}

pub(super) async fn session_list(State(podium): State<Podium>, caller: RfCaller) -> Answer {
    let sessions = podium.redfish_session_list(caller.caller()).await?;
    Ok(collection(
        "#SessionCollection.SessionCollection",
        &format!("{ROOT}/SessionService/Sessions"),
        "Session Collection",
        sessions.iter().map(|s| session_uri(&s.id)).collect(),
    ))
}

/// Opens a session: `UserName` (anything) and `Password` (a Podium token); answers the session
/// with its token in `X-Auth-Token`, once.
pub(super) async fn session_create(
    State(podium): State<Podium>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    const ACTION: &str = "Sessions";
    let body = object(body)?;
    let mut user_name = None;
    let mut password = None;
    for (key, value) in &body {
        match key.as_str() {
            "UserName" => user_name = Some(string_of(key, value)?),
            "Password" => password = Some(string_of(key, value)?),
            k if k.starts_with('@') => {}
            k => return Err(RedfishError::property_unknown(k)),
        }
    }
    let user_name = user_name.ok_or_else(|| RedfishError::parameter_missing(ACTION, "UserName"))?;
    let password = password.ok_or_else(|| RedfishError::parameter_missing(ACTION, "Password"))?;
    let caller = podium
        .redfish_authenticate(RedfishCredential::Token(password))
        .await?;
    let (view, secret) = podium
        .redfish_session_create(&caller.caller, user_name)
        .await?;
    let mut response = (StatusCode::CREATED, Json(session(&view))).into_response();
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&session_uri(&view.id)) {
        headers.insert(LOCATION, v);
    }
    if let Ok(mut v) = HeaderValue::from_str(secret.expose()) {
        v.set_sensitive(true);
        headers.insert(X_AUTH_TOKEN, v);
    }
    Ok(response)
}

pub(super) async fn session_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = podium
        .redfish_session_view(caller.caller(), &SessionId::from(id))
        .await?;
    Ok(resource(session(&s)))
}

pub(super) async fn session_delete(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    podium
        .redfish_session_delete(&caller.0, &SessionId::from(id))
        .await?;
    Ok(no_content())
}
