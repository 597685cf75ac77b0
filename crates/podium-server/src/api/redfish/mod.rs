//! The Redfish face at `/redfish/v1` (`docs/redfish.md`): the hosts a caller may drive, as the
//! systems of a Redfish service, for tools that speak Redfish to a BMC (Ironic, sushy, DMTF's
//! `redfish` library and utilities). The password of HTTP Basic, a bearer token or a session's
//! `X-Auth-Token` is a Podium token; what it may see and do is decided by `podium-app`
//! (`redfish.rs`), and this module only speaks Redfish: resources with their `@odata.id` and
//! ETag, actions answered as a BMC answers them (202 and a task monitor), errors in Redfish's
//! format. No resource names the real BMC: every system, its manager and its media are
//! Podium's.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::header::{
    ALLOW, AUTHORIZATION, CACHE_CONTROL, ETAG, IF_MATCH, LINK, LOCATION, WWW_AUTHENTICATE,
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
use podium_app::redfish::{BootChange, RedfishCaller, RedfishCredential, SESSION_TIMEOUT_SECS};
use podium_types::views::{OperationView, SessionView, SystemView};
use podium_types::{
    BootMode, BootPersistence, BootSettings, BootTarget, HostId, MediaAction, MediaRequest,
    MediaSlot, MediaType, OperationId, OperationStatus, PowerAction, PowerState, SessionId,
};

mod accounts;

const ROOT: &str = "/redfish/v1";
const X_AUTH_TOKEN: HeaderName = HeaderName::from_static("x-auth-token");
const ODATA_VERSION: HeaderName = HeaderName::from_static("odata-version");
/// The version of DMTF's Base message registry the errors' `MessageId`s come from.
const BASE: &str = "Base.1.8";

/// The Redfish service's routes.
pub(crate) fn router() -> Router<Podium> {
    Router::new()
        .route("/redfish", get(versions))
        .route("/redfish/v1", get(service_root))
        .route("/redfish/v1/", get(service_root))
        .route("/redfish/v1/odata", get(odata))
        .route("/redfish/v1/$metadata", get(metadata))
        .route("/redfish/v1/SessionService", get(session_service))
        .route(
            "/redfish/v1/SessionService/Sessions",
            get(session_list).post(session_create),
        )
        .route(
            "/redfish/v1/SessionService/Sessions/Members",
            post(session_create),
        )
        .route(
            "/redfish/v1/SessionService/Sessions/{id}",
            get(session_view).delete(session_delete),
        )
        .route("/redfish/v1/Systems", get(system_list))
        .route(
            "/redfish/v1/Systems/{id}",
            get(system_view).patch(system_patch),
        )
        .route(
            "/redfish/v1/Systems/{id}/Actions/ComputerSystem.Reset",
            post(system_reset),
        )
        .route("/redfish/v1/Systems/{id}/EthernetInterfaces", get(nic_list))
        .route(
            "/redfish/v1/Systems/{id}/EthernetInterfaces/{nic}",
            get(nic_view),
        )
        .route(
            "/redfish/v1/Systems/{id}/VirtualMedia",
            get(system_media_list),
        )
        .route(
            "/redfish/v1/Systems/{id}/VirtualMedia/{slot}",
            get(system_media_view),
        )
        .route(
            "/redfish/v1/Systems/{id}/VirtualMedia/{slot}/Actions/{action}",
            post(system_media_action),
        )
        .route("/redfish/v1/Chassis", get(chassis_list))
        .route("/redfish/v1/Chassis/{id}", get(chassis_view))
        .route("/redfish/v1/Managers", get(manager_list))
        .route("/redfish/v1/Managers/{id}", get(manager_view))
        .route(
            "/redfish/v1/Managers/{id}/VirtualMedia",
            get(manager_media_list),
        )
        .route(
            "/redfish/v1/Managers/{id}/VirtualMedia/{slot}",
            get(manager_media_view),
        )
        .route(
            "/redfish/v1/Managers/{id}/VirtualMedia/{slot}/Actions/{action}",
            post(manager_media_action),
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
        .route("/redfish/v1/TaskService", get(task_service))
        .route("/redfish/v1/TaskService/Tasks", get(task_list))
        .route("/redfish/v1/TaskService/Tasks/{id}", get(task_view))
        .route(
            "/redfish/v1/TaskService/TaskMonitors/{id}",
            get(task_monitor),
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
        "/redfish/v1/SessionService/Sessions" => "GET, HEAD, POST",
        "/redfish/v1/SessionService/Sessions/{id}" => "GET, HEAD, DELETE",
        "/redfish/v1/Systems/{id}" => "GET, HEAD, PATCH",
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
        let message = e.to_string();
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
    let mut response = (StatusCode::ACCEPTED, Json(task(op))).into_response();
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

// ---- the service ----

async fn versions() -> Response {
    Json(json!({"v1": "/redfish/v1/"})).into_response()
}

/// The service root answers without credentials, as Redfish requires.
async fn service_root() -> Response {
    resource(json!({
        "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot",
        "@odata.id": "/redfish/v1/",
        "Id": "RootService",
        "Name": "Podium Redfish Service",
        "RedfishVersion": "1.6.0",
        "Vendor": "Podium",
        "Product": "Podium",
        "Systems": {"@odata.id": format!("{ROOT}/Systems")},
        "Managers": {"@odata.id": format!("{ROOT}/Managers")},
        "Chassis": {"@odata.id": format!("{ROOT}/Chassis")},
        "SessionService": {"@odata.id": format!("{ROOT}/SessionService")},
        "AccountService": {"@odata.id": format!("{ROOT}/AccountService")},
        "TaskService": {"@odata.id": format!("{ROOT}/TaskService")},
        "Links": {"Sessions": {"@odata.id": format!("{ROOT}/SessionService/Sessions")}},
    }))
}

async fn odata() -> Response {
    let entry = |name: &str, url: &str| json!({"name": name, "kind": "Singleton", "url": url});
    Json(json!({
        "@odata.context": "/redfish/v1/$metadata",
        "value": [
            entry("Service", "/redfish/v1/"),
            entry("Systems", "/redfish/v1/Systems"),
            entry("Managers", "/redfish/v1/Managers"),
            entry("Chassis", "/redfish/v1/Chassis"),
            entry("SessionService", "/redfish/v1/SessionService"),
            entry("AccountService", "/redfish/v1/AccountService"),
            entry("TaskService", "/redfish/v1/TaskService"),
            entry("Sessions", "/redfish/v1/SessionService/Sessions"),
        ],
    }))
    .into_response()
}

/// The CSDL document: the DMTF schemas the service's resources are instances of.
async fn metadata() -> Response {
    const SCHEMAS: [(&str, &str); 23] = [
        ("ChassisCollection", "ChassisCollection"),
        ("Chassis", "Chassis.v1_14_0"),
        ("ServiceRoot", "ServiceRoot.v1_5_0"),
        ("ComputerSystemCollection", "ComputerSystemCollection"),
        ("ComputerSystem", "ComputerSystem.v1_13_0"),
        ("EthernetInterfaceCollection", "EthernetInterfaceCollection"),
        ("EthernetInterface", "EthernetInterface.v1_4_0"),
        ("ManagerCollection", "ManagerCollection"),
        ("Manager", "Manager.v1_10_0"),
        ("VirtualMediaCollection", "VirtualMediaCollection"),
        ("VirtualMedia", "VirtualMedia.v1_4_0"),
        ("SessionService", "SessionService.v1_1_8"),
        ("SessionCollection", "SessionCollection"),
        ("Session", "Session.v1_3_0"),
        ("TaskService", "TaskService.v1_1_5"),
        ("TaskCollection", "TaskCollection"),
        ("Task", "Task.v1_4_3"),
        ("Message", "Message.v1_1_1"),
        ("AccountService", "AccountService.v1_5_0"),
        ("ManagerAccountCollection", "ManagerAccountCollection"),
        ("ManagerAccount", "ManagerAccount.v1_4_0"),
        ("RoleCollection", "RoleCollection"),
        ("Role", "Role.v1_2_4"),
    ];
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <edmx:Edmx xmlns:edmx=\"http://docs.oasis-open.org/odata/ns/edmx\" Version=\"4.0\">\n",
    );
    for (file, versioned) in SCHEMAS {
        xml.push_str(&format!(
            "  <edmx:Reference Uri=\"http://redfish.dmtf.org/schemas/v1/{file}_v1.xml\">\n    \
             <edmx:Include Namespace=\"{file}\"/>\n"
        ));
        if versioned != file {
            xml.push_str(&format!("    <edmx:Include Namespace=\"{versioned}\"/>\n"));
        }
        xml.push_str("  </edmx:Reference>\n");
    }
    xml.push_str(
        "  <edmx:DataServices>\n    <Schema xmlns=\"http://docs.oasis-open.org/odata/ns/edm\" \
         Namespace=\"Service\">\n      <EntityContainer Name=\"Service\" \
         Extends=\"ServiceRoot.v1_5_0.ServiceContainer\"/>\n    </Schema>\n  \
         </edmx:DataServices>\n</edmx:Edmx>\n",
    );
    (
        [(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/xml"),
        )],
        xml,
    )
        .into_response()
}

// ---- sessions ----

async fn session_service(_caller: RfCaller) -> Response {
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

fn session_uri(id: &SessionId) -> String {
    format!("{ROOT}/SessionService/Sessions/{id}")
}

fn session(s: &SessionView) -> Value {
    json!({
        "@odata.type": "#Session.v1_3_0.Session",
        "@odata.id": session_uri(&s.id),
        "Id": s.id,
        "Name": "User Session",
        "UserName": s.user_name,
        "CreatedTime": s.created_at,
    })
}

async fn session_list(State(podium): State<Podium>, caller: RfCaller) -> Answer {
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
async fn session_create(
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

async fn session_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = podium
        .redfish_session_view(caller.caller(), &SessionId::from(id))
        .await?;
    Ok(resource(session(&s)))
}

async fn session_delete(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    podium
        .redfish_session_delete(&caller.0, &SessionId::from(id))
        .await?;
    Ok(no_content())
}

fn no_content() -> Response {
    StatusCode::NO_CONTENT.into_response()
}

// ---- systems ----

fn system_uri(id: &HostId) -> String {
    format!("{ROOT}/Systems/{id}")
}

fn manager_uri(id: &HostId) -> String {
    format!("{ROOT}/Managers/{id}")
}

const RESET_TYPES: [&str; 6] = [
    "On",
    "ForceOn",
    "ForceOff",
    "GracefulShutdown",
    "GracefulRestart",
    "ForceRestart",
];

const BOOT_TARGETS: [(&str, BootTarget); 7] = [
    ("None", BootTarget::None),
    ("Pxe", BootTarget::Pxe),
    ("Cd", BootTarget::Cd),
    ("Hdd", BootTarget::Hdd),
    ("UefiHttp", BootTarget::UefiHttp),
    ("Usb", BootTarget::Usb),
    ("BiosSetup", BootTarget::BiosSetup),
];

const BOOT_ENABLED: [(&str, BootPersistence); 3] = [
    ("Disabled", BootPersistence::Disabled),
    ("Once", BootPersistence::Once),
    ("Continuous", BootPersistence::Continuous),
];

const BOOT_MODES: [(&str, BootMode); 2] = [("UEFI", BootMode::Uefi), ("Legacy", BootMode::Legacy)];

fn name_of<T: PartialEq + Copy>(table: &[(&'static str, T)], value: T) -> &'static str {
    table
        .iter()
        .find(|(_, v)| *v == value)
        .map_or("None", |(n, _)| n)
}

fn power_state(p: PowerState) -> Value {
    match p {
        PowerState::On => json!("On"),
        PowerState::Off => json!("Off"),
        PowerState::PoweringOn => json!("PoweringOn"),
        PowerState::PoweringOff => json!("PoweringOff"),
        PowerState::Unknown => Value::Null,
    }
}

fn system(s: &SystemView) -> Value {
    let uri = system_uri(&s.id);
    let boot = s.boot.unwrap_or(BootSettings {
        target: BootTarget::None,
        persistence: BootPersistence::Disabled,
        mode: None,
    });
    let health = if s.state.as_str() == "error" {
        "Warning"
    } else {
        "OK"
    };
    let mut boot_json = json!({
        "BootSourceOverrideEnabled": name_of(&BOOT_ENABLED, boot.persistence),
        "BootSourceOverrideEnabled@Redfish.AllowableValues": BOOT_ENABLED.map(|(n, _)| n),
        "BootSourceOverrideTarget": name_of(&BOOT_TARGETS, boot.target),
        "BootSourceOverrideTarget@Redfish.AllowableValues": BOOT_TARGETS.map(|(n, _)| n),
        "BootSourceOverrideMode@Redfish.AllowableValues": BOOT_MODES.map(|(n, _)| n),
    });
    if let Some(mode) = boot.mode {
        boot_json["BootSourceOverrideMode"] = json!(name_of(&BOOT_MODES, mode));
    }
    let mut oem = json!({"ProvisioningState": s.state.as_str()});
    if let Some(claim) = &s.claim {
        oem["Claim"] = json!(claim);
    }
    json!({
        "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
        "@odata.id": uri,
        "Id": s.id,
        "Name": s.name,
        "UUID": s.uuid,
        "Manufacturer": s.manufacturer,
        "Model": s.model,
        "SerialNumber": s.serial,
        "SystemType": "Physical",
        "PowerState": power_state(s.power_state),
        "Status": {"State": "Enabled", "Health": health},
        "ProcessorSummary": {"Count": s.cpu_count},
        "MemorySummary": {"TotalSystemMemoryGiB": s.memory_mib as f64 / 1024.0},
        "Boot": boot_json,
        "EthernetInterfaces": {"@odata.id": format!("{uri}/EthernetInterfaces")},
        "VirtualMedia": {"@odata.id": format!("{uri}/VirtualMedia")},
        "Links": {
            "ManagedBy": [{"@odata.id": manager_uri(&s.id)}],
            "Chassis": [{"@odata.id": chassis_uri(&s.id)}],
        },
        "Actions": {"#ComputerSystem.Reset": {
            "target": format!("{uri}/Actions/ComputerSystem.Reset"),
            "ResetType@Redfish.AllowableValues": RESET_TYPES,
        }},
        "Oem": {"Podium": oem},
    })
}

async fn system_list(State(podium): State<Podium>, caller: RfCaller) -> Answer {
    let systems = podium.redfish_systems(caller.caller()).await?;
    Ok(collection(
        "#ComputerSystemCollection.ComputerSystemCollection",
        &format!("{ROOT}/Systems"),
        "Computer System Collection",
        systems.iter().map(|s| system_uri(&s.id)).collect(),
    ))
}

async fn system_get(
    podium: &Podium,
    caller: &RfCaller,
    id: String,
) -> Result<SystemView, RedfishError> {
    Ok(podium
        .redfish_system(caller.caller(), &HostId::from(id))
        .await?)
}

async fn system_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    Ok(resource(system(&system_get(&podium, &caller, id).await?)))
}

/// A PATCH of `Boot` (the only property that can change): a boot override operation. An
/// `If-Match` that is not the system's current ETag is refused (412).
async fn system_patch(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let current = system_get(&podium, &caller, id).await?;
    if let Some(if_match) = headers.get(IF_MATCH) {
        let etag = etag_of(&system(&current));
        let matches = if_match.to_str().is_ok_and(|v| {
            v.split(',')
                .map(str::trim)
                .any(|t| t == "*" || t == etag || t == etag.trim_start_matches("W/"))
        });
        if !matches {
            return Err(RedfishError::new(
                StatusCode::PRECONDITION_FAILED,
                "PreconditionFailed",
                "The ETag supplied did not match the ETag required to change this resource.",
            ));
        }
    }
    let body = object(body)?;
    let mut boot = None;
    for (key, value) in &body {
        match key.as_str() {
            "Boot" => boot = Some(value),
            k if k.starts_with('@') => {}
            k => return Err(RedfishError::property_unknown(k)),
        }
    }
    let Some(boot) = boot else {
        return Err(RedfishError::new(
            StatusCode::BAD_REQUEST,
            "PropertyMissing",
            "The property Boot is a required property and must be included in the request.",
        )
        .with_args(&["Boot"]));
    };
    let op = podium
        .redfish_boot(caller.caller(), &current.id, boot_change(boot)?)
        .await?;
    Ok(accepted(&op))
}

/// The value of `table` a property names, or the error that lists the values it may have.
fn pick<T: Copy>(
    name: &str,
    value: &Value,
    table: &[(&'static str, T)],
) -> Result<T, RedfishError> {
    value
        .as_str()
        .and_then(|v| table.iter().find(|(n, _)| *n == v))
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            RedfishError::property_value(
                name,
                value,
                &table.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
            )
        })
}

/// What a PATCH of `Boot` names (`podium-app` reads it over the current override).
fn boot_change(boot: &Value) -> Result<BootChange, RedfishError> {
    let Some(boot) = boot.as_object() else {
        return Err(RedfishError::new(
            StatusCode::BAD_REQUEST,
            "PropertyValueTypeError",
            "The property Boot must be an object.",
        )
        .with_args(&["Boot"]));
    };
    let mut change = BootChange::default();
    for (key, value) in boot {
        match key.as_str() {
            "BootSourceOverrideTarget" => change.target = Some(pick(key, value, &BOOT_TARGETS)?),
            "BootSourceOverrideEnabled" => {
                change.persistence = Some(pick(key, value, &BOOT_ENABLED)?)
            }
            "BootSourceOverrideMode" => change.mode = Some(pick(key, value, &BOOT_MODES)?),
            k => return Err(RedfishError::property_unknown(&format!("Boot/{k}"))),
        }
    }
    Ok(change)
}

async fn system_reset(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    const ACTION: &str = "ComputerSystem.Reset";
    let body = object(body)?;
    let mut reset = None;
    for (key, value) in &body {
        match key.as_str() {
            "ResetType" => reset = Some(value),
            k if k.starts_with('@') => {}
            k => return Err(RedfishError::parameter_unknown(ACTION, k)),
        }
    }
    let reset = reset.ok_or_else(|| RedfishError::parameter_missing(ACTION, "ResetType"))?;
    let action = match reset.as_str() {
        Some("On" | "ForceOn") => PowerAction::On,
        Some("ForceOff") => PowerAction::ForceOff,
        Some("GracefulShutdown") => PowerAction::GracefulShutdown,
        Some("GracefulRestart") => PowerAction::GracefulRestart,
        Some("ForceRestart") => PowerAction::ForceRestart,
        _ => {
            return Err(RedfishError::parameter_value(
                ACTION,
                "ResetType",
                reset,
                &RESET_TYPES.join(", "),
            ));
        }
    };
    let op = podium
        .redfish_reset(caller.caller(), &HostId::from(id), action)
        .await?;
    Ok(accepted(&op))
}

// ---- NICs ----

async fn nic_list(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    let uri = format!("{}/EthernetInterfaces", system_uri(&s.id));
    Ok(collection(
        "#EthernetInterfaceCollection.EthernetInterfaceCollection",
        &uri,
        "Ethernet Interface Collection",
        s.nics
            .iter()
            .map(|n| format!("{uri}/{}", segment(&n.id)))
            .collect(),
    ))
}

async fn nic_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path((id, nic)): Path<(String, String)>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    let uri = format!("{}/EthernetInterfaces/{nic}", system_uri(&s.id));
    let n = s
        .nics
        .iter()
        .find(|n| segment(&n.id) == nic)
        .ok_or_else(|| missing(&uri))?;
    let mut body = json!({
        "@odata.type": "#EthernetInterface.v1_4_0.EthernetInterface",
        "@odata.id": uri,
        "Id": segment(&n.id),
        "Name": n.name.clone().unwrap_or_else(|| n.id.clone()),
        "MACAddress": n.mac,
        "PermanentMACAddress": n.mac,
        "Status": {"State": "Enabled", "Health": "OK"},
    });
    if let Some(speed) = n.speed_mbps {
        body["SpeedMbps"] = json!(speed);
    }
    Ok(resource(body))
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

// ---- chassis ----

fn chassis_uri(id: &HostId) -> String {
    format!("{ROOT}/Chassis/{id}")
}

async fn chassis_list(State(podium): State<Podium>, caller: RfCaller) -> Answer {
    let systems = podium.redfish_systems(caller.caller()).await?;
    Ok(collection(
        "#ChassisCollection.ChassisCollection",
        &format!("{ROOT}/Chassis"),
        "Chassis Collection",
        systems.iter().map(|s| chassis_uri(&s.id)).collect(),
    ))
}

/// Each system's enclosure: what inventory tools walk to find the system.
async fn chassis_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    Ok(resource(json!({
        "@odata.type": "#Chassis.v1_14_0.Chassis",
        "@odata.id": chassis_uri(&s.id),
        "Id": s.id,
        "Name": format!("Chassis of {}", s.name),
        "ChassisType": "RackMount",
        "Manufacturer": s.manufacturer,
        "Model": s.model,
        "SerialNumber": s.serial,
        "PowerState": power_state(s.power_state),
        "Status": {"State": "Enabled", "Health": "OK"},
        "Links": {
            "ComputerSystems": [{"@odata.id": system_uri(&s.id)}],
            "ManagedBy": [{"@odata.id": manager_uri(&s.id)}],
        },
    })))
}

// ---- managers and virtual media ----

async fn manager_list(State(podium): State<Podium>, caller: RfCaller) -> Answer {
    let systems = podium.redfish_systems(caller.caller()).await?;
    Ok(collection(
        "#ManagerCollection.ManagerCollection",
        &format!("{ROOT}/Managers"),
        "Manager Collection",
        systems.iter().map(|s| manager_uri(&s.id)).collect(),
    ))
}

/// Each system's manager: Podium standing for its BMC.
async fn manager_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    let uri = manager_uri(&s.id);
    Ok(resource(json!({
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
    })))
}

fn media_type_name(t: MediaType) -> &'static str {
    match t {
        MediaType::Cd => "CD",
        MediaType::Dvd => "DVD",
        MediaType::Floppy => "Floppy",
        MediaType::Usb => "USBStick",
    }
}

fn media_list(s: &SystemView, base: &str) -> Response {
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

fn media_slot<'a>(
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

fn media(m: &MediaSlot, uri: &str) -> Value {
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

async fn media_action(
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

struct Insert {
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
fn insert_media(body: Result<Bytes, BytesRejection>) -> Result<Insert, RedfishError> {
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

async fn system_media_list(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    Ok(media_list(&s, &system_uri(&s.id)))
}

async fn manager_media_list(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    Ok(media_list(&s, &manager_uri(&s.id)))
}

async fn system_media_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path((id, slot)): Path<(String, String)>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    let (m, uri) = media_slot(&s, &system_uri(&s.id), &slot)?;
    Ok(resource(media(m, &uri)))
}

async fn manager_media_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path((id, slot)): Path<(String, String)>,
) -> Answer {
    let s = system_get(&podium, &caller, id).await?;
    let (m, uri) = media_slot(&s, &manager_uri(&s.id), &slot)?;
    Ok(resource(media(m, &uri)))
}

async fn system_media_action(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(path): Path<(String, String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    media_action(&podium, &caller, system_uri, path, body).await
}

async fn manager_media_action(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(path): Path<(String, String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    media_action(&podium, &caller, manager_uri, path, body).await
}

// ---- tasks ----

async fn task_service(_caller: RfCaller) -> Response {
    resource(json!({
        "@odata.type": "#TaskService.v1_1_5.TaskService",
        "@odata.id": format!("{ROOT}/TaskService"),
        "Id": "TaskService",
        "Name": "Task Service",
        "ServiceEnabled": true,
        "Status": {"State": "Enabled", "Health": "OK"},
        "Tasks": {"@odata.id": format!("{ROOT}/TaskService/Tasks")},
    }))
}

/// Tasks are listed one at a time only (each is an operation the caller queued): the collection
/// is empty rather than every operation of the site.
async fn task_list(_caller: RfCaller) -> Response {
    collection(
        "#TaskCollection.TaskCollection",
        &format!("{ROOT}/TaskService/Tasks"),
        "Task Collection",
        Vec::new(),
    )
}

fn task(op: &OperationView) -> Value {
    let (state, status) = match op.status {
        OperationStatus::Queued => ("Pending", "OK"),
        OperationStatus::Running => ("Running", "OK"),
        OperationStatus::Succeeded => ("Completed", "OK"),
        OperationStatus::Failed => ("Exception", "Critical"),
    };
    let mut messages = Vec::new();
    if let Some(error) = &op.error {
        messages.push(json!({
            "MessageId": format!("{BASE}.GeneralError"),
            "Message": error,
            "Severity": "Critical",
            "MessageSeverity": "Critical",
        }));
    }
    let mut body = json!({
        "@odata.type": "#Task.v1_4_3.Task",
        "@odata.id": format!("{ROOT}/TaskService/Tasks/{}", op.id),
        "Id": op.id,
        "Name": format!("{} of a system", op.kind),
        "TaskState": state,
        "TaskStatus": status,
        "TaskMonitor": monitor_uri(&op.id),
        "StartTime": op.started_at.unwrap_or(op.created_at),
        "Messages": messages,
    });
    if let Some(end) = &op.finished_at {
        body["EndTime"] = json!(end);
    }
    if let Some(host) = &op.host {
        body["Payload"] = json!({"TargetUri": system_uri(host)});
    }
    body
}

async fn task_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let op = podium
        .redfish_task(caller.caller(), &OperationId::from(id))
        .await?;
    Ok(resource(task(&op)))
}

/// The task monitor: 202 while the operation is queued or running, then what the action would
/// have answered had it run at once: 204 when it succeeded, an error naming why when it failed
/// (502: the BMC, or the driver in front of it, refused or failed).
async fn task_monitor(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let op = podium
        .redfish_task(caller.caller(), &OperationId::from(id))
        .await?;
    Ok(match op.status {
        OperationStatus::Queued | OperationStatus::Running => accepted(&op),
        OperationStatus::Succeeded => no_content(),
        OperationStatus::Failed => RedfishError::new(
            StatusCode::BAD_GATEWAY,
            "GeneralError",
            op.error.unwrap_or_else(|| "the operation failed".into()),
        )
        .into_response(),
    })
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
    value.as_str().ok_or_else(|| {
        RedfishError::new(
            StatusCode::BAD_REQUEST,
            "PropertyValueTypeError",
            format!("The property {key} must be a string."),
        )
        .with_args(&[key])
    })
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
