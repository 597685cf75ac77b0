//! `podium task`: the server's background tasks (probe, sync, bind, expiry, leasing).

use clap::Subcommand;
use podium_types::views::TaskList;
use serde_json::json;

use super::client::Client;
use super::input::seg;
use super::output::{self, Column, Format};
use super::print;

#[derive(Debug, Subcommand)]
pub(super) enum TaskCommand {
    /// List the tasks of the server that answers: last run, duration, outcome, next run.
    List,
    /// Run a task now (`probe`, `sync`, `bind`, `expiry` or `leasing`).
    Run { name: String },
}

const TASK_COLUMNS: &[Column] = &[
    ("NAME", "/name"),
    ("RUNS", "/runs"),
    ("LAST STARTED", "/last_started_at"),
    ("MS", "/last_duration_ms"),
    ("RESULT", "/last_result"),
    ("ERROR", "/last_error"),
    ("NEXT RUN", "/next_run_at"),
];

pub(super) async fn run(url: Option<&str>, format: Format, cmd: TaskCommand) -> anyhow::Result<()> {
    let c = Client::from_env(url)?;
    match cmd {
        TaskCommand::List => {
            let tasks: TaskList = c.get_view("/v1/admin/tasks").await?;
            let items = tasks
                .items
                .iter()
                .map(serde_json::to_value)
                .collect::<Result<Vec<_>, _>>()?;
            print(output::list(format, &items, TASK_COLUMNS));
        }
        TaskCommand::Run { name } => {
            let path = format!("/v1/admin/tasks/{}/run", seg(&name)?);
            print(output::object(format, &c.post(&path, &json!({})).await?));
        }
    }
    Ok(())
}
