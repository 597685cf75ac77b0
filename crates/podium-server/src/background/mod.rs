//! Background work: every periodic job of the process (probing pod managers, syncing their
//! inventories, binding pending claims, forgetting expired config drives, leasing operations)
//! is a task owned by one handle, `Background`, in `Podium`. Each task runs on its interval,
//! or at once when asked (`run_now`: by the API's `POST /v1/admin/tasks/{name}/run`, and by the
//! application where an event makes the work due, such as a host becoming free for a pending
//! claim), and keeps its status (runs, last start, duration, outcome, next run) for
//! `GET /v1/admin/tasks`.
//!
//! **Invariant:** a task never runs twice at once in a process: its loop runs the job, then
//! waits; a `run_now` during a run makes the next run start as soon as this one ends.

mod bind;
mod expiry;
mod probe;
mod sync;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::app::Podium;
use crate::auth::Caller;
use crate::error::Error;

impl Podium {
    /// `GET /v1/admin/tasks`: every background task of this process with its status.
    pub(crate) fn task_list(&self, caller: &Caller) -> Result<Vec<TaskStatus>, Error> {
        caller.require_admin_read()?;
        Ok(self.background.statuses())
    }

    /// `POST /v1/admin/tasks/{name}/run`: runs a task now (after its current run, if one is
    /// under way); answers its status as the request found it.
    pub(crate) fn task_run(&self, caller: &Caller, name: &str) -> Result<TaskStatus, Error> {
        caller.require_admin()?;
        let job = Job::from_name(name).ok_or_else(|| Error::not_found("task", name))?;
        self.background.run_now(job);
        Ok(self.background.status(job))
    }
}

/// A periodic job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Job {
    /// Probes every pod manager (`probe.rs`).
    Probe,
    /// Syncs every online pod manager's inventory (`sync.rs`).
    Sync,
    /// Tries to bind every pending claim (`bind.rs`).
    Bind,
    /// Forgets expired config drives (`expiry.rs`).
    Expiry,
    /// Leases due operations while there is room (`operations.rs`).
    Leasing,
}

impl Job {
    pub(crate) const ALL: [Job; 5] = [Job::Probe, Job::Sync, Job::Bind, Job::Expiry, Job::Leasing];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Job::Probe => "probe",
            Job::Sync => "sync",
            Job::Bind => "bind",
            Job::Expiry => "expiry",
            Job::Leasing => "leasing",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Job> {
        Job::ALL.into_iter().find(|j| j.name() == name)
    }

    fn about(self) -> &'static str {
        match self {
            Job::Probe => "probes every pod manager and records its status",
            Job::Sync => "syncs the inventory of every online pod manager",
            Job::Bind => "tries to bind every pending claim to a free host",
            Job::Expiry => "forgets config drives whose URL has expired",
            Job::Leasing => "leases due operations while this process has room to run them",
        }
    }

    /// Runs the job once: what it did, or why it could not.
    async fn run(self, podium: &Podium) -> Result<String, String> {
        match self {
            Job::Probe => probe::run(podium).await,
            Job::Sync => sync::run(podium).await,
            Job::Bind => bind::run(podium).await,
            Job::Expiry => expiry::run(podium).await,
            Job::Leasing => Ok(podium.operations_fill().await),
        }
    }
}

/// How often each job runs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Intervals {
    pub(crate) probe: Duration,
    pub(crate) sync: Duration,
    /// Binding pending claims and forgetting expired drives: as often as the probe.
    pub(crate) housekeeping: Duration,
    /// How long the leasing waits when nothing wakes it (retries that came due, leases that
    /// expired).
    pub(crate) leasing: Duration,
}

impl Intervals {
    fn of(&self, job: Job) -> Duration {
        match job {
            Job::Probe => self.probe,
            Job::Sync => self.sync,
            Job::Bind | Job::Expiry => self.housekeeping,
            Job::Leasing => self.leasing,
        }
    }
}

/// A task's status, as `GET /v1/admin/tasks` shows it.
#[derive(Clone, Debug, Default, serde::Serialize, utoipa::ToSchema)]
pub(crate) struct TaskStatus {
    /// `probe`, `sync`, `bind`, `expiry` or `leasing`.
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    /// Seconds between runs.
    pub(crate) interval_seconds: f64,
    /// Runs since this process started.
    pub(crate) runs: u64,
    pub(crate) running: bool,
    pub(crate) last_started_at: Option<String>,
    pub(crate) last_duration_ms: Option<u64>,
    /// What the last run did.
    pub(crate) last_result: Option<String>,
    /// Why the last run failed, if it did (cleared by a run that succeeds).
    pub(crate) last_error: Option<String>,
    /// When it runs next, unless asked to run sooner; `null` while it runs or before start.
    pub(crate) next_run_at: Option<String>,
}

#[derive(Debug)]
struct Task {
    job: Job,
    now: Notify,
    status: Mutex<TaskStatus>,
}

/// The handle that owns the background tasks.
#[derive(Debug)]
pub(crate) struct Background {
    tasks: Vec<Arc<Task>>,
    handles: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Default for Background {
    fn default() -> Background {
        let tasks = Job::ALL
            .into_iter()
            .map(|job| {
                Arc::new(Task {
                    job,
                    now: Notify::new(),
                    status: Mutex::new(TaskStatus {
                        name: job.name(),
                        description: job.about(),
                        ..TaskStatus::default()
                    }),
                })
            })
            .collect();
        Background {
            tasks,
            handles: Mutex::new(Vec::new()),
        }
    }
}

impl Background {
    fn task(&self, job: Job) -> &Arc<Task> {
        self.tasks
            .iter()
            .find(|t| t.job == job)
            .expect("every job has a task")
    }

    /// Makes `job` run as soon as it is not running (at once if it is waiting).
    pub(crate) fn run_now(&self, job: Job) {
        self.task(job).now.notify_one();
    }

    /// Every task's status, in `Job::ALL` order.
    pub(crate) fn statuses(&self) -> Vec<TaskStatus> {
        self.tasks
            .iter()
            .map(|t| t.status.lock().expect("status poisoned").clone())
            .collect()
    }

    pub(crate) fn status(&self, job: Job) -> TaskStatus {
        self.task(job)
            .status
            .lock()
            .expect("status poisoned")
            .clone()
    }

    /// Starts every task; the sync and the leasing run at once, the others after an interval.
    pub(crate) fn start(&self, podium: &Podium, intervals: Intervals) {
        let mut handles = self.handles.lock().expect("handles poisoned");
        for task in &self.tasks {
            let (task, podium) = (task.clone(), podium.clone());
            let every = intervals.of(task.job);
            let first = matches!(task.job, Job::Sync | Job::Leasing);
            handles.push(tokio::spawn(
                async move { task.run(podium, every, first).await },
            ));
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        for handle in self.handles.get_mut().expect("handles poisoned").drain(..) {
            handle.abort();
        }
    }
}

impl Task {
    async fn run(&self, podium: Podium, every: Duration, mut due: bool) {
        self.update(|s| s.interval_seconds = every.as_secs_f64());
        loop {
            if !due {
                self.update(|s| s.next_run_at = Some(after(every)));
                tokio::select! {
                    () = tokio::time::sleep(every) => {}
                    () = self.now.notified() => {}
                }
            }
            due = false;
            let started = Instant::now();
            self.update(|s| {
                s.running = true;
                s.next_run_at = None;
                s.last_started_at = Some(podium_store::now());
            });
            let outcome = self.job.run(&podium).await;
            if let Err(e) = &outcome {
                tracing::warn!(task = self.job.name(), error = %e, "background task failed");
            }
            self.update(|s| {
                s.running = false;
                s.runs += 1;
                s.last_duration_ms =
                    Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
                match outcome {
                    Ok(done) => {
                        s.last_result = Some(done);
                        s.last_error = None;
                    }
                    Err(e) => s.last_error = Some(e),
                }
            });
        }
    }

    fn update(&self, f: impl FnOnce(&mut TaskStatus)) {
        f(&mut self.status.lock().expect("status poisoned"));
    }
}

/// A job's outcome from its counts: what it did, or, when some failed, an error saying so.
fn counted(done: String, failed: usize) -> Result<String, String> {
    match failed {
        0 => Ok(done),
        n => Err(format!("{done}, {n} failed")),
    }
}

fn after(d: Duration) -> String {
    let d = time::Duration::try_from(d).unwrap_or(time::Duration::MAX);
    podium_store::format_time(time::OffsetDateTime::now_utc().saturating_add(d))
}
