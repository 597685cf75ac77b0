//! The Redfish face at `/redfish/v1` (`docs/redfish.md`): the hosts a caller may drive, as the
//! systems of a Redfish service, for tools that speak Redfish to a BMC (Ironic, sushy, DMTF's
//! `redfish` library and utilities). The password of HTTP Basic, a bearer token or a session's
//! `X-Auth-Token` is a Podium token; what it may see and do is decided by `podium-app`
//! (`redfish.rs`), and this module only speaks Redfish: resources with their `@odata.id` and
//! ETag, actions answered as a BMC answers them (202 and a task monitor), errors in Redfish's
//! format. No resource names the real BMC: every system, its manager and its media are
//! Podium's.

use axum::body::Bytes;
use axum::extract::FromRequestParts;
use axum::extract::rejection::BytesRejection;
use axum::http::header::{
    ALLOW, AUTHORIZATION, CACHE_CONTROL, ETAG, LINK, LOCATION, WWW_AUTHENTICATE,
};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use podium_app::app::Podium;
use podium_app::auth::Caller;
use podium_app::error::Error;
use podium_app::redfish::{RedfishCaller, RedfishCredential};
use podium_types::views::OperationView;
use podium_types::{HostId, OperationId};

mod accounts;
mod events;
mod hardware;
mod media;
mod service;
mod sessions;
mod systems;
mod tasks;
mod update;

const ROOT: &str = "/redfish/v1";
const X_AUTH_TOKEN: HeaderName = HeaderName::from_static("x-auth-token");
const ODATA_VERSION: HeaderName = HeaderName::from_static("odata-version");
/// The version of DMTF's Base message registry the errors' `MessageId`s come from.
const BASE: &str = "Base.1.8";

/// The Redfish service's routes.
pub(crate) fn router() -> Router<Podium> {
    Router::new()
        .route("/redfish", get(service::versions))
        .route("/redfish/v1", get(service::service_root))
        .route("/redfish/v1/", get(service::service_root))
        .route("/redfish/v1/odata", get(service::odata))
        .route("/redfish/v1/$metadata", get(service::metadata))
        .route("/redfish/v1/SessionService", get(sessions::session_service))
        .route(
            "/redfish/v1/SessionService/Sessions",
            get(sessions::session_list).post(sessions::session_create),
        )
        .route(
            "/redfish/v1/SessionService/Sessions/Members",
            post(sessions::session_create),
        )
        .route(
            "/redfish/v1/SessionService/Sessions/{id}",
            get(sessions::session_view).delete(sessions::session_delete),
        )
        .route("/redfish/v1/Systems", get(systems::system_list))
        .route(
            "/redfish/v1/Systems/{id}",
            get(systems::system_view).patch(systems::system_patch),
        )
        .route(
            "/redfish/v1/Systems/{id}/Actions/ComputerSystem.Reset",
            post(systems::system_reset),
        )
        .route("/redfish/v1/Systems/{id}/Bios", get(hardware::bios_view))
        .route(
            "/redfish/v1/Systems/{id}/Bios/Settings",
            get(hardware::bios_settings).patch(hardware::bios_settings_patch),
        )
        .route(
            "/redfish/v1/Systems/{id}/Bios/Actions/Bios.ResetBios",
            post(hardware::bios_reset),
        )
        .route(
            "/redfish/v1/Systems/{id}/SecureBoot",
            get(hardware::secure_boot_view).patch(hardware::secure_boot_patch),
        )
        .route(
            "/redfish/v1/Systems/{id}/Processors",
            get(hardware::processor_list),
        )
        .route(
            "/redfish/v1/Systems/{id}/Processors/{member}",
            get(hardware::processor_view),
        )
        .route(
            "/redfish/v1/Systems/{id}/Memory",
            get(hardware::memory_list),
        )
        .route(
            "/redfish/v1/Systems/{id}/Memory/{member}",
            get(hardware::memory_view),
        )
        .route(
            "/redfish/v1/Systems/{id}/SimpleStorage",
            get(hardware::simple_storage_list),
        )
        .route(
            "/redfish/v1/Systems/{id}/SimpleStorage/{member}",
            get(hardware::simple_storage_view),
        )
        .route(
            "/redfish/v1/Systems/{id}/Storage",
            get(hardware::storage_list),
        )
        .route(
            "/redfish/v1/Systems/{id}/Storage/{member}",
            get(hardware::storage_view),
        )
        .route(
            "/redfish/v1/Systems/{id}/Storage/{member}/Drives/{drive}",
            get(hardware::drive_view),
        )
        .route("/redfish/v1/Registries", get(hardware::registry_list))
        .route(
            "/redfish/v1/Registries/{name}",
            get(hardware::registry_file),
        )
        .route(
            "/redfish/v1/Registries/{name}/en",
            get(hardware::registry_view),
        )
        .route(
            "/redfish/v1/Systems/{id}/EthernetInterfaces",
            get(systems::nic_list),
        )
        .route(
            "/redfish/v1/Systems/{id}/EthernetInterfaces/{nic}",
            get(systems::nic_view),
        )
        .route(
            "/redfish/v1/Systems/{id}/VirtualMedia",
            get(media::system_media_list),
        )
        .route(
            "/redfish/v1/Systems/{id}/VirtualMedia/{slot}",
            get(media::system_media_view),
        )
        .route(
            "/redfish/v1/Systems/{id}/VirtualMedia/{slot}/Actions/{action}",
            post(media::system_media_action),
        )
        .route("/redfish/v1/Chassis", get(systems::chassis_list))
        .route("/redfish/v1/Chassis/{id}", get(systems::chassis_view))
        .route("/redfish/v1/Managers", get(media::manager_list))
        .route("/redfish/v1/Managers/{id}", get(media::manager_view))
        .route(
            "/redfish/v1/Managers/{id}/VirtualMedia",
            get(media::manager_media_list),
        )
        .route(
            "/redfish/v1/Managers/{id}/VirtualMedia/{slot}",
            get(media::manager_media_view),
        )
        .route(
            "/redfish/v1/Managers/{id}/VirtualMedia/{slot}/Actions/{action}",
            post(media::manager_media_action),
        )
        .route("/redfish/v1/AccountService", get(accounts::account_service))
        .route(
            "/redfish/v1/AccountService/Accounts",
            get(accounts::account_list),
        )
        .route(
            "/redfish/v1/AccountService/Accounts/{id}",
            get(accounts::account_view),
        )
        .route("/redfish/v1/AccountService/Roles", get(accounts::role_list))
        .route(
            "/redfish/v1/AccountService/Roles/{id}",
            get(accounts::role_view),
        )
        .route("/redfish/v1/UpdateService", get(update::update_service))
        .route(
            "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate",
            post(update::simple_update),
        )
        .route("/redfish/v1/EventService", get(events::event_service))
        .route(
            "/redfish/v1/EventService/Subscriptions",
            get(events::subscription_list).post(events::subscription_create),
        )
        .route(
            "/redfish/v1/EventService/Subscriptions/{id}",
            get(events::subscription_view).delete(events::subscription_delete),
        )
        .route("/redfish/v1/TaskService", get(tasks::task_service))
        .route("/redfish/v1/TaskService/Tasks", get(tasks::task_list))
        .route("/redfish/v1/TaskService/Tasks/{id}", get(tasks::task_view))
        .route(
            "/redfish/v1/TaskService/TaskMonitors/{id}",
            get(tasks::task_monitor),
        )
        .route_layer(axum::middleware::from_fn(protocol))
}

/// What every answer of the service carries, and the one request header it checks: a request
/// for an OData version other than 4.0 is refused (412); every answer says `OData-Version: 4.0`,
/// `Cache-Control: no-cache` (a resource is the machine's state now) and `Allow`: the methods
/// its URI takes.
async fn protocol(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    if let Some(v) = request.headers().get(ODATA_VERSION)
        && v.as_bytes() != b"4.0"
    {
        return RedfishError::new(
            StatusCode::PRECONDITION_FAILED,
            "PreconditionFailed",
            "This service speaks OData-Version 4.0 only.",
        )
        .into_response();
    }
    let template = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|m| m.as_str().to_owned());
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(ODATA_VERSION, HeaderValue::from_static("4.0"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Some(template) = template {
        headers.insert(ALLOW, HeaderValue::from_static(allowed(&template)));
    }
    response
}

/// The methods a route of the service takes.
fn allowed(template: &str) -> &'static str {
    match template {
        "/redfish/v1/SessionService/Sessions" | "/redfish/v1/EventService/Subscriptions" => {
            "GET, HEAD, POST"
        }
        "/redfish/v1/SessionService/Sessions/{id}"
        | "/redfish/v1/EventService/Subscriptions/{id}" => "GET, HEAD, DELETE",
        "/redfish/v1/Systems/{id}"
        | "/redfish/v1/Systems/{id}/Bios/Settings"
        | "/redfish/v1/Systems/{id}/SecureBoot" => "GET, HEAD, PATCH",
        t if t.contains("/Actions/") || t.ends_with("/Members") => "POST",
        _ => "GET, HEAD",
    }
}

/// Whether a path is the Redfish service's (its errors are answered in Redfish's format).
pub(crate) fn is_redfish(path: &str) -> bool {
    path == "/redfish" || path.starts_with("/redfish/")
}

/// The caller a Redfish request's credentials name, if they are valid (for the audit log).
pub(crate) async fn caller_of(podium: &Podium, headers: &HeaderMap) -> Option<Caller> {
    Some(authenticate(podium, headers).await.ok()?.caller)
}

// ---- errors ----

/// An error as a Redfish service answers it: `error.code` and `@Message.ExtendedInfo` with a
/// message of DMTF's Base registry.
#[derive(Debug)]
pub(crate) struct RedfishError {
    status: StatusCode,
    message_id: &'static str,
    message: String,
    args: Vec<String>,
}

impl RedfishError {
    fn new(status: StatusCode, message_id: &'static str, message: impl Into<String>) -> Self {
        RedfishError {
            status,
            message_id,
            message: message.into(),
            args: Vec::new(),
        }
    }

    fn with_args(mut self, args: &[&str]) -> Self {
        self.args = args.iter().map(|a| (*a).to_owned()).collect();
        self
    }

    fn property_unknown(name: &str) -> Self {
        RedfishError::new(
            StatusCode::BAD_REQUEST,
            "PropertyUnknown",
            format!("The property {name} is not a known property of the resource, or cannot be changed here."),
        )
        .with_args(&[name])
    }

    fn property_missing(name: &str) -> Self {
        RedfishError::new(
            StatusCode::BAD_REQUEST,
            "PropertyMissing",
            format!(
                "The property {name} is a required property and must be included in the request."
            ),
        )
        .with_args(&[name])
    }

    fn property_type(name: &str, expected: &str) -> Self {
        RedfishError::new(
            StatusCode::BAD_REQUEST,
            "PropertyValueTypeError",
            format!("The property {name} must be {expected}."),
        )
        .with_args(&[name])
    }

    fn property_value(name: &str, value: &Value, allowed: &str) -> Self {
        let value = value.to_string();
        RedfishError::new(
            StatusCode::BAD_REQUEST,
            "PropertyValueNotInList",
            format!("The value {value} for the property {name} is not in the list of acceptable values ({allowed})."),
        )
        .with_args(&[&value, name])
    }

    fn parameter_unknown(action: &str, name: &str) -> Self {
        RedfishError::new(
            StatusCode::BAD_REQUEST,
            "ActionParameterUnknown",
            format!("The action {action} was submitted with the invalid parameter {name}."),
        )
        .with_args(&[action, name])
    }

    fn parameter_missing(action: &str, name: &str) -> Self {
        RedfishError::new(
            StatusCode::BAD_REQUEST,
            "ActionParameterMissing",
            format!("The action {action} requires the parameter {name} to be present in the request body."),
        )
        .with_args(&[action, name])
    }

    fn parameter_value(action: &str, name: &str, value: &Value, allowed: &str) -> Self {
        let value = value.to_string();
        RedfishError::new(
            StatusCode::BAD_REQUEST,
            "ActionParameterValueNotInList",
            format!("The value {value} for the parameter {name} in the action {action} is not in the list of acceptable values ({allowed})."),
        )
        .with_args(&[&value, name, action])
    }
}

impl From<Error> for RedfishError {
    fn from(e: Error) -> RedfishError {
        let (status, _, _) = super::ApiError::status_of(&e);
        let message = match &e {
            // The property a refusal is about, where its message does not name it.
            Error::Invalid {
                field: Some(field),
                message,
            } if !message.contains(field.as_str()) => format!("{field}: {message}"),
            e => e.to_string(),
        };
        let message_id = match &e {
            Error::Unauthenticated(_) => "NoValidSession",
            Error::Forbidden(_) => "InsufficientPrivilege",
            Error::NotFound { .. } => "ResourceNotFound",
            Error::BadRequest { .. } => "MalformedJSON",
            Error::Invalid { .. } => "PropertyValueFormatError",
            Error::Conflict { .. } | Error::ConflictField { .. } => "ResourceInUse",
            Error::Internal(_) => "InternalError",
            Error::Unavailable(_) => "ServiceTemporarilyUnavailable",
            _ => "GeneralError",
        };
        if let Error::Internal(source) = &e {
            tracing::error!(error = %format!("{source:#}"), "a Redfish request failed");
        }
        // A state conflict is refused as a BMC refuses an action it cannot take now.
        let status = if status == StatusCode::UNPROCESSABLE_ENTITY {
            StatusCode::BAD_REQUEST
        } else {
            status
        };
        RedfishError::new(status, message_id, message)
    }
}

impl IntoResponse for RedfishError {
    fn into_response(self) -> Response {
        let id = format!("{BASE}.{}", self.message_id);
        let mut info = json!({
            "@odata.type": "#Message.v1_1_1.Message",
            "MessageId": id,
            "Message": self.message,
            "Severity": "Critical",
            "MessageSeverity": "Critical",
            "Resolution": resolution(self.message_id),
        });
        if !self.args.is_empty() {
            info["MessageArgs"] = json!(self.args);
        }
        let body = json!({"error": {
            "code": id,
            "message": self.message,
            "@Message.ExtendedInfo": [info],
        }});
        let mut response = (self.status, Json(body)).into_response();
        let headers = response.headers_mut();
        headers.insert(ODATA_VERSION, HeaderValue::from_static("4.0"));
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(
                WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"Podium Redfish\""),
            );
        }
        response
    }
}

fn resolution(message_id: &str) -> &'static str {
    match message_id {
        "NoValidSession" => {
            "Send a Podium token as the password of HTTP Basic, or open a session with one and send its X-Auth-Token."
        }
        "InsufficientPrivilege" => "Use a token that may do this (one that is not read-only).",
        "ResourceNotFound" | "ResourceMissingAtURI" => {
            "Use a URI the service lists; a tenant sees only the systems of its bound claims."
        }
        "ResourceInUse" => "Wait until the system's current work is done and try again.",
        "PreconditionFailed" => "Read the resource again and send its current ETag in If-Match.",
        _ => "None.",
    }
}

type Answer = Result<Response, RedfishError>;

pub(crate) fn not_found(uri: &axum::http::Uri) -> RedfishError {
    RedfishError::new(
        StatusCode::NOT_FOUND,
        "ResourceMissingAtURI",
        format!("The resource at the URI {} was not found.", uri.path()),
    )
    .with_args(&[uri.path()])
}

pub(crate) fn method_not_allowed() -> RedfishError {
    RedfishError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "OperationNotAllowed",
        "The HTTP method is not allowed on this resource.",
    )
}

// ---- the caller ----

/// The caller of a Redfish request: HTTP Basic (any user name, a Podium token as the password),
/// a bearer token, or a session's `X-Auth-Token`.
#[derive(Debug)]
struct RfCaller(RedfishCaller);

impl RfCaller {
    fn caller(&self) -> &Caller {
        &self.0.caller
    }
}

impl FromRequestParts<Podium> for RfCaller {
    type Rejection = RedfishError;

    async fn from_request_parts(
        parts: &mut Parts,
        podium: &Podium,
    ) -> Result<RfCaller, RedfishError> {
        Ok(RfCaller(authenticate(podium, &parts.headers).await?))
    }
}

/// The caller a request's credentials name.
async fn authenticate(podium: &Podium, headers: &HeaderMap) -> Result<RedfishCaller, RedfishError> {
    let given = credential(headers)?;
    let credential = match &given {
        Given::Token(t) => RedfishCredential::Token(t),
        Given::Session(s) => RedfishCredential::Session(s),
    };
    Ok(podium.redfish_authenticate(credential).await?)
}

/// The secret a request carries (never logged, never answered).
enum Given {
    Token(String),
    Session(String),
}

fn credential(headers: &HeaderMap) -> Result<Given, RedfishError> {
    let unauthenticated = |why: &'static str| RedfishError::from(Error::Unauthenticated(why));
    if let Some(v) = headers.get(X_AUTH_TOKEN) {
        let v = v
            .to_str()
            .map_err(|_| unauthenticated("malformed X-Auth-Token"))?;
        return Ok(Given::Session(v.trim().to_owned()));
    }
    let Some(v) = headers.get(AUTHORIZATION) else {
        return Err(unauthenticated(
            "missing credentials: send HTTP Basic with a Podium token as the password, or a session's X-Auth-Token",
        ));
    };
    let v = v
        .to_str()
        .map_err(|_| unauthenticated("malformed Authorization header"))?;
    if let Some(token) = v.strip_prefix("Bearer ") {
        return Ok(Given::Token(token.trim().to_owned()));
    }
    let encoded = v
        .strip_prefix("Basic ")
        .ok_or_else(|| unauthenticated("unsupported Authorization scheme: use Basic or Bearer"))?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()
        .and_then(|d| String::from_utf8(d).ok())
        .ok_or_else(|| unauthenticated("malformed HTTP Basic credentials"))?;
    let (_, password) = decoded
        .split_once(':')
        .ok_or_else(|| unauthenticated("malformed HTTP Basic credentials"))?;
    Ok(Given::Token(password.to_owned()))
}

// ---- answers ----

/// A resource: its JSON with `@odata.etag`, the same ETag in the header.
fn resource(mut body: Value) -> Response {
    let etag = etag_of(&body);
    let body_type = body["@odata.type"].as_str().unwrap_or("").to_owned();
    body["@odata.etag"] = json!(etag);
    let mut response = Json(body).into_response();
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        headers.insert(ETAG, v);
    }
    if let Some(link) = described_by(&body_type)
        && let Ok(v) = HeaderValue::from_str(&link)
    {
        headers.insert(LINK, v);
    }
    response
}

/// The `Link` to the DMTF JSON schema a resource of `@odata.type` is an instance of.
fn described_by(odata_type: &str) -> Option<String> {
    let namespace = odata_type.strip_prefix('#')?.rsplit_once('.')?.0;
    Some(format!(
        "<http://redfish.dmtf.org/schemas/v1/{namespace}.json>; rel=describedby"
    ))
}

/// A weak ETag of a resource's JSON (without its own `@odata.etag`).
fn etag_of(body: &Value) -> String {
    let mut body = body.clone();
    if let Some(object) = body.as_object_mut() {
        object.remove("@odata.etag");
    }
    let digest = Sha256::digest(body.to_string().as_bytes());
    format!("W/\"{}\"", hex::encode(&digest[..12]))
}

fn collection(odata_type: &str, id: &str, name: &str, members: Vec<String>) -> Response {
    let members: Vec<Value> = members
        .into_iter()
        .map(|m| json!({"@odata.id": m}))
        .collect();
    resource(json!({
        "@odata.type": odata_type,
        "@odata.id": id,
        "Name": name,
        "Members@odata.count": members.len(),
        "Members": members,
    }))
}

/// An action accepted as a Podium operation: 202, the task monitor in `Location`, the task as
/// the body.
fn accepted(op: &OperationView) -> Response {
    let mut response = (StatusCode::ACCEPTED, Json(tasks::task(op))).into_response();
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&monitor_uri(&op.id)) {
        headers.insert(LOCATION, v);
    }
    headers.insert(
        HeaderName::from_static("retry-after"),
        HeaderValue::from_static("1"),
    );
    response
}

fn monitor_uri(id: &OperationId) -> String {
    format!("{ROOT}/TaskService/TaskMonitors/{id}")
}

fn system_uri(id: &HostId) -> String {
    format!("{ROOT}/Systems/{id}")
}

fn manager_uri(id: &HostId) -> String {
    format!("{ROOT}/Managers/{id}")
}

fn chassis_uri(id: &HostId) -> String {
    format!("{ROOT}/Chassis/{id}")
}

/// A driver's id made one path segment.
fn segment(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn missing(uri: &str) -> RedfishError {
    RedfishError::new(
        StatusCode::NOT_FOUND,
        "ResourceMissingAtURI",
        format!("The resource at the URI {uri} was not found."),
    )
    .with_args(&[uri])
}

// ---- bodies ----

fn object(body: Result<Bytes, BytesRejection>) -> Result<Map<String, Value>, RedfishError> {
    let body = body.map_err(|e| {
        RedfishError::new(
            e.status(),
            "GeneralError",
            format!("The request body could not be read: {}", e.body_text()),
        )
    })?;
    match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(RedfishError::new(
            StatusCode::BAD_REQUEST,
            "MalformedJSON",
            "The request body submitted was malformed JSON and could not be parsed by the receiving service.",
        )),
    }
}

/// An action's body where it may be empty.
fn optional_object(
    body: Result<Bytes, BytesRejection>,
) -> Result<Map<String, Value>, RedfishError> {
    match &body {
        Ok(b) if b.iter().all(u8::is_ascii_whitespace) => Ok(Map::new()),
        _ => object(body),
    }
}

fn string_of<'a>(key: &str, value: &'a Value) -> Result<&'a str, RedfishError> {
    value
        .as_str()
        .ok_or_else(|| RedfishError::property_type(key, "a string"))
}

fn string_param<'a>(action: &str, key: &str, value: &'a Value) -> Result<&'a str, RedfishError> {
    value.as_str().ok_or_else(|| {
        RedfishError::new(
            StatusCode::BAD_REQUEST,
            "ActionParameterValueTypeError",
            format!("The value for the parameter {key} in the action {action} must be a string."),
        )
        .with_args(&[key, action])
    })
}

fn no_content() -> Response {
    StatusCode::NO_CONTENT.into_response()
}
