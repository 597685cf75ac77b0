//! The handle that owns the background tasks: one per `Job`, each a loop that runs its job on
//! its interval or when asked, and keeps its status. It knows nothing of what a job does: the
//! runner it is started with does the work (`background/mod.rs`). Features ask for a job
//! through it (`run_now`) without depending on the features the runner calls.
//!
//! **Invariant:** a task never runs twice at once in a process: its loop runs the job, then
//! waits; a `run_now` during a run makes the next run start as soon as this one ends.

use podium_types::views::TaskStatus;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use tokio::sync::Notify;

/// What runs a job once: what it did, or why it could not.
pub(crate) type Runner =
    Arc<dyn Fn(Job) -> BoxFuture<'static, Result<Outcome, crate::error::Error>> + Send + Sync>;

/// What a run of a task did: what it counted, by name (`tried`, `failed`, ...), and the same
/// in words. A run whose count `failed` is not zero is shown as failed.
#[derive(Clone, Debug, Default)]
pub(crate) struct Outcome {
    summary: String,
    counts: Vec<(&'static str, u64)>,
}

impl Outcome {
    pub(crate) fn new(summary: impl Into<String>) -> Outcome {
        Outcome {
            summary: summary.into(),
            counts: Vec::new(),
        }
    }

    /// The outcome with one more count.
    pub(crate) fn count(mut self, name: &'static str, n: usize) -> Outcome {
        self.counts
            .push((name, u64::try_from(n).unwrap_or(u64::MAX)));
        self
    }

    fn failed(&self) -> u64 {
        self.counts
            .iter()
            .find(|(name, _)| *name == "failed")
            .map_or(0, |(_, n)| *n)
    }
}

/// A periodic job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
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
    /// Reads the power state of the hosts with their own BMC whose turn came, a share of them
    /// per run, so each is read about once per sync interval (`refresh.rs`).
    Refresh,
    /// Pushes the events each Redfish event subscription has not had yet
    /// (`subscriptions.rs`).
    Delivery,
}

impl Job {
    pub const ALL: [Job; 7] = [
        Job::Probe,
        Job::Sync,
        Job::Bind,
        Job::Expiry,
        Job::Leasing,
        Job::Refresh,
        Job::Delivery,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Job::Probe => "probe",
            Job::Sync => "sync",
            Job::Bind => "bind",
            Job::Expiry => "expiry",
            Job::Leasing => "leasing",
            Job::Refresh => "refresh",
            Job::Delivery => "delivery",
        }
    }

    pub fn from_name(name: &str) -> Option<Job> {
        Job::ALL.into_iter().find(|j| j.name() == name)
    }

    fn about(self) -> &'static str {
        match self {
            Job::Probe => "probes every pod manager and records its status",
            Job::Sync => "syncs the inventory of every online pod manager",
            Job::Bind => "tries to bind every pending claim to a free host",
            Job::Expiry => "forgets config drives whose URL has expired",
            Job::Leasing => "leases due operations while this process has room to run them",
            Job::Refresh => {
                "reads the power of hosts with their own BMC in turn, spread over the sync interval"
            }
            Job::Delivery => "pushes to each Redfish event subscription the events it has not had",
        }
    }
}

/// How often each job runs.
#[derive(Clone, Copy, Debug)]
pub struct Intervals {
    pub probe: Duration,
    pub sync: Duration,
    /// Binding pending claims and forgetting expired drives: as often as the probe.
    pub housekeeping: Duration,
    /// How long the leasing waits when nothing wakes it (retries that came due, leases that
    /// expired).
    pub leasing: Duration,
}

impl Intervals {
    /// How often the refresh task runs: sixty runs per sync interval (each takes a sixtieth of
    /// the hosts with their own BMC), at most every second, at least every ten seconds.
    pub fn refresh(&self) -> Duration {
        (self.sync / 60).clamp(Duration::from_secs(1), Duration::from_secs(10))
    }

    fn of(&self, job: Job) -> Duration {
        match job {
            Job::Probe => self.probe,
            Job::Sync => self.sync,
            Job::Bind | Job::Expiry => self.housekeeping,
            Job::Leasing => self.leasing,
            Job::Refresh => self.refresh(),
            // A second: an event reaches its subscribers within about that.
            Job::Delivery => Duration::from_secs(1),
        }
    }
}

/// A task's status, as `GET /v1/admin/tasks` shows it.
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
                        name: job.name().to_owned(),
                        description: job.about().to_owned(),
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

    /// Runs `job` whenever `wakes` resolves (the datastore stored an operation, say), for as
    /// long as the tasks run.
    pub(crate) fn wake_on<F>(&self, job: Job, wakes: impl Fn() -> F + Send + 'static)
    where
        F: std::future::Future<Output = ()> + Send,
    {
        let task = self.task(job).clone();
        self.handles
            .lock()
            .expect("handles poisoned")
            .push(tokio::spawn(async move {
                loop {
                    wakes().await;
                    task.now.notify_one();
                }
            }));
    }

    /// Starts every task; the sync and the leasing run at once, the others after an interval.
    pub(crate) fn start(&self, runner: Runner, intervals: Intervals) {
        let mut handles = self.handles.lock().expect("handles poisoned");
        for task in &self.tasks {
            let (task, runner) = (task.clone(), runner.clone());
            let every = intervals.of(task.job);
            let first = matches!(task.job, Job::Sync | Job::Leasing);
            handles.push(tokio::spawn(
                async move { task.run(runner, every, first).await },
            ));
        }
    }
}

impl Background {
    /// Stops every task (the process is shutting down); a run under way is dropped where it
    /// waits.
    pub(crate) fn stop(&self) {
        for handle in self.handles.lock().expect("handles poisoned").drain(..) {
            handle.abort();
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Task {
    async fn run(&self, runner: Runner, every: Duration, mut due: bool) {
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
                s.last_started_at = Some(podium_types::Timestamp::now());
            });
            let outcome = runner(self.job).await;
            let failed = match &outcome {
                Err(e) => Some(e.to_string()),
                Ok(done) if done.failed() > 0 => {
                    Some(format!("{}, {} failed", done.summary, done.failed()))
                }
                Ok(_) => None,
            };
            if let Some(e) = &failed {
                tracing::warn!(task = self.job.name(), error = %e, "background task failed");
            }
            self.update(|s| {
                s.running = false;
                s.runs += 1;
                s.last_duration_ms =
                    Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
                if let Ok(done) = outcome {
                    s.last_counts = done
                        .counts
                        .iter()
                        .map(|(name, n)| ((*name).to_owned(), *n))
                        .collect();
                    if failed.is_none() {
                        s.last_result = Some(done.summary);
                    }
                }
                s.last_error = failed;
            });
        }
    }

    fn update(&self, f: impl FnOnce(&mut TaskStatus)) {
        f(&mut self.status.lock().expect("status poisoned"));
    }
}

fn after(d: Duration) -> podium_types::Timestamp {
    podium_types::Timestamp::now().after(d)
}
