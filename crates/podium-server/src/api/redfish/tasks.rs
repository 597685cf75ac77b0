//! `TaskService`: a Podium operation as a Redfish task, and the task monitor an action's 202
//! points to.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use podium_app::app::Podium;
use podium_types::views::OperationView;
use podium_types::{OperationId, OperationStatus};

use super::{
    Answer, BASE, ROOT, RedfishError, RfCaller, accepted, collection, monitor_uri, no_content,
    resource, system_uri,
};

pub(super) async fn task_service(_caller: RfCaller) -> Response {
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
pub(super) async fn task_list(_caller: RfCaller) -> Response {
    collection(
        "#TaskCollection.TaskCollection",
        &format!("{ROOT}/TaskService/Tasks"),
        "Task Collection",
        Vec::new(),
    )
}

pub(super) fn task(op: &OperationView) -> Value {
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

pub(super) async fn task_view(
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
pub(super) async fn task_monitor(
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
