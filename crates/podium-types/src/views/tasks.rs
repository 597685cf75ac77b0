//! The background tasks of the process that answers.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A task's status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TaskStatus {
    /// `probe`, `sync`, `bind`, `expiry` or `leasing`.
    pub name: String,
    pub description: String,
    /// Seconds between runs.
    pub interval_seconds: f64,
    /// Runs since this process started.
    pub runs: u64,
    pub running: bool,
    pub last_started_at: Option<crate::Timestamp>,
    pub last_duration_ms: Option<u64>,
    /// What the last run did.
    pub last_result: Option<String>,
    /// The same, counted: by name (`tried`, `failed`, `synced`, `read`, ...).
    pub last_counts: std::collections::BTreeMap<String, u64>,
    /// Why the last run failed, if it did (cleared by a run that succeeds).
    pub last_error: Option<String>,
    /// When it runs next, unless asked to run sooner; `null` while it runs or before start.
    pub next_run_at: Option<crate::Timestamp>,
}

/// Every background task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TaskList {
    pub items: Vec<TaskStatus>,
}
