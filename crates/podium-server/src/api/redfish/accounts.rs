//! The Redfish face's `AccountService`, read-only: a Podium token is the one account its
//! caller sees (`Accounts` holds the caller alone), with the standard role its kind maps to
//! (`podium-app` decides which: an admin's token `Administrator`, a tenant's `Operator`, a
//! read-only one `ReadOnly`), and `Roles` are DMTF's three standard roles with their standard
//! privileges. Accounts and roles are made through Podium's own API (tokens), never here:
//! their routes take GET alone, so a write is a 405 as for any method a resource does not take.

use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::{Value, json};

use podium_app::app::Podium;
use podium_types::views::{RedfishAccountView, RedfishRole};

use super::{Answer, ROOT, RfCaller, collection, resource};

fn account_uri(id: &str) -> String {
    format!("{ROOT}/AccountService/Accounts/{id}")
}

fn role_uri(role: RedfishRole) -> String {
    format!("{ROOT}/AccountService/Roles/{}", role.as_str())
}

/// The privileges of a standard role, as DMTF's Redfish specification defines them.
fn privileges(role: RedfishRole) -> &'static [&'static str] {
    match role {
        RedfishRole::Administrator => &[
            "Login",
            "ConfigureManager",
            "ConfigureUsers",
            "ConfigureComponents",
            "ConfigureSelf",
        ],
        RedfishRole::Operator => &["Login", "ConfigureComponents", "ConfigureSelf"],
        RedfishRole::ReadOnly => &["Login", "ConfigureSelf"],
    }
}

pub(super) async fn account_service(_caller: RfCaller) -> Response {
    resource(json!({
        "@odata.type": "#AccountService.v1_5_0.AccountService",
        "@odata.id": format!("{ROOT}/AccountService"),
        "Id": "AccountService",
        "Name": "Account Service",
        "Description": "Podium tokens as Redfish accounts: each caller sees its own; tokens are \
                        made through Podium's API",
        "ServiceEnabled": true,
        "Status": {"State": "Enabled", "Health": "OK"},
        "Accounts": {"@odata.id": format!("{ROOT}/AccountService/Accounts")},
        "Roles": {"@odata.id": format!("{ROOT}/AccountService/Roles")},
    }))
}

pub(super) async fn account_list(State(podium): State<Podium>, caller: RfCaller) -> Answer {
    let account = podium.redfish_account(caller.caller()).await?;
    Ok(collection(
        "#ManagerAccountCollection.ManagerAccountCollection",
        &format!("{ROOT}/AccountService/Accounts"),
        "Accounts",
        vec![account_uri(account.id.as_str())],
    ))
}

/// The caller's own account; any other is not found.
pub(super) async fn account_view(
    State(podium): State<Podium>,
    caller: RfCaller,
    Path(id): Path<String>,
) -> Answer {
    let account = podium.redfish_account(caller.caller()).await?;
    if account.id.as_str() != id {
        return Err(super::missing(&account_uri(&id)));
    }
    Ok(resource(account_resource(&account)))
}

fn account_resource(account: &RedfishAccountView) -> Value {
    json!({
        "@odata.type": "#ManagerAccount.v1_4_0.ManagerAccount",
        "@odata.id": account_uri(account.id.as_str()),
        "Id": account.id,
        "Name": "User Account",
        "Description": "A Podium token",
        "UserName": account.user_name,
        "RoleId": account.role.as_str(),
        "Enabled": true,
        "Locked": false,
        "Password": null,
        "Links": {"Role": {"@odata.id": role_uri(account.role)}},
    })
}

pub(super) async fn role_list(_caller: RfCaller) -> Response {
    collection(
        "#RoleCollection.RoleCollection",
        &format!("{ROOT}/AccountService/Roles"),
        "Roles",
        RedfishRole::ALL.iter().copied().map(role_uri).collect(),
    )
}

pub(super) async fn role_view(_caller: RfCaller, Path(id): Path<String>) -> Answer {
    let role = id
        .parse::<RedfishRole>()
        .map_err(|_| super::missing(&format!("{ROOT}/AccountService/Roles/{id}")))?;
    Ok(resource(json!({
        "@odata.type": "#Role.v1_2_4.Role",
        "@odata.id": role_uri(role),
        "Id": role.as_str(),
        "Name": format!("{} Role", role.as_str()),
        "RoleId": role.as_str(),
        "IsPredefined": true,
        "AssignedPrivileges": privileges(role),
    })))
}
