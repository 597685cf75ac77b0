//! Background work: every periodic job of the process (probing pod managers, syncing their
//! inventories, reading the hosts with their own BMC, binding pending claims, forgetting expired
//! config drives, leasing operations)
//! is a task owned by one handle, `Background`, in `Podium`. Each task runs on its interval,
//! or at once when asked (`run_now`: by the API's `POST /v1/admin/tasks/{name}/run`, and by the
//! application where an event makes the work due, such as a host becoming free for a pending
//! claim), and keeps its status (runs, last start, duration, outcome, next run) for
//! `GET /v1/admin/tasks`.
//!
//! The handle and its tasks are in `tasks.rs`, below every feature; what each job does is
//! here, above them.

mod expiry;

use std::sync::Arc;

pub use crate::tasks::{Intervals, Job};
use crate::tasks::{Outcome, Runner};
use podium_types::views::{TaskList, TaskStatus};

use crate::app::Podium;
use crate::auth::Caller;
use crate::error::Error;

impl Podium {
    /// Starts the background tasks of this process.
    pub fn background_start(&self, intervals: Intervals) {
        let podium = self.clone();
        let runner: Runner = Arc::new(move |job| {
            let podium = podium.clone();
            Box::pin(async move { run(job, &podium, intervals).await })
        });
        self.inner.background.start(runner, intervals);
        // Whatever stores an operation wakes the leasing: no feature wakes it by hand.
        let datastore = self.datastore().clone();
        self.inner.background.wake_on(Job::Leasing, move || {
            let datastore = datastore.clone();
            async move { datastore.queued().await }
        });
    }

    /// Shuts this process's work down: event streams end, the periodic tasks stop, the operations worker leases
    /// nothing more, lets running operations finish for up to `grace`, and hands back those
    /// still running (to another process, or to this one restarted, at once). Answers the
    /// operations handed back.
    pub async fn shutdown(&self, grace: std::time::Duration) -> Vec<podium_types::OperationId> {
        self.inner.events.stop();
        self.inner.background.stop();
        let handed_back = self.operations_shutdown(grace).await;
        if handed_back.is_empty() {
            tracing::info!("every operation of this process ended before shutdown");
        } else {
            let ids: Vec<&str> = handed_back.iter().map(|id| id.as_str()).collect();
            tracing::info!(
                count = ids.len(),
                operations = %ids.join(","),
                "handed back operations still running at shutdown"
            );
        }
        handed_back
    }

    /// `GET /v1/admin/tasks`: every background task of this process with its status.
    pub fn task_list(&self, caller: &Caller) -> Result<TaskList, Error> {
        caller.require_admin_read()?;
        Ok(TaskList {
            items: self.inner.background.statuses(),
        })
    }

    /// `POST /v1/admin/tasks/{name}/run`: runs a task now (after its current run, if one is
    /// under way); answers its status as the request found it.
    pub fn task_run(&self, caller: &Caller, name: &str) -> Result<TaskStatus, Error> {
        caller.require_admin()?;
        let job = Job::from_name(name).ok_or_else(|| Error::not_found("task", name))?;
        self.inner.background.run_now(job);
        Ok(self.inner.background.status(job))
    }
}

/// Runs the job once: what it did, or why it could not. The work is the feature's that owns
/// it; only the expiry, which touches several, is here.
async fn run(job: Job, podium: &Podium, intervals: Intervals) -> Result<Outcome, Error> {
    match job {
        Job::Probe => podium.pod_managers_probe_all().await,
        Job::Sync => podium.pod_managers_sync_all().await,
        Job::Bind => podium.claims_bind_pending().await,
        Job::Expiry => expiry::run(podium).await,
        Job::Leasing => Ok(podium.operations_fill().await),
        Job::Refresh => {
            podium
                .hosts_refresh_due(intervals.sync, intervals.refresh())
                .await
        }
        Job::Delivery => podium.subscriptions_deliver().await,
    }
}
