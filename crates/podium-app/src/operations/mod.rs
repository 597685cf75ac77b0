//! Durable operations: every driver action (power, boot override, virtual media) and every sync
//! is stored before it runs, and a worker in each Podium process runs what is due.
//!
//! A worker *leases* an operation (`operations.lease_owner`, `lease_expires_at`) and renews the
//! lease while the call runs. A process that dies (`kill -9`) stops renewing: once the lease
//! expires, any worker, in this process after a restart or in another process on the same
//! PostgreSQL database, takes the operation over and runs it again. Every action is idempotent
//! at the BMC (a power state, a boot override, an image in a slot), so running one twice does
//! not change the outcome.
//!
//! A transient failure (unreachable, timeout, a 5xx, the datastore)
//! puts the operation back in the queue with exponential backoff, up to a bound of attempts;
//! a permanent one (unauthorized, unsupported, invalid, not found) fails it at once with the
//! plugin's words. At most the site's `limits.service` (else `per_pod_manager`) operations of
//! one pod manager's shared Redfish service run at once, counted across every process on the
//! database (leasing is serialized), so a slow service holds up only its own site; a host with
//! its own BMC runs one operation at a time and is not counted against its service, so a site of
//! independent BMCs runs wide, unless the admin set it a `limits.site` (every operation counted).

mod deprovision;
mod host_action;
mod inspect;
mod install;
mod provision;
mod register;
mod sync;
pub(crate) mod worker;

pub use worker::OperationSettings;

use crate::data::{OperationRow, operation_host, pod_manager_load};
use crate::metrics::state::Attempt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::app::Podium;
use crate::error::Error;
use crate::queue::Held;
use crate::tasks::Outcome;
use podium_runtime::CallError;
use podium_types::{ErrorCode, OperationId, OperationRequest, OperationResult};

const RETRY_MAX: Duration = Duration::from_secs(60);

/// Whether a failure may pass if the operation is tried again later.
fn transient(e: &Error) -> bool {
    match e {
        Error::Plugin {
            source: e @ (CallError::Plugin { .. } | CallError::Busy { .. }),
            ..
        } => e.is_transient(),
        // A call that ran out its deadline is the plugin's failure (a BMC's slowness shows as
        // the `http` import's timeout, which the plugin reports as transient): trying again
        // would repeat whatever it did until the deadline.
        // The datastore: an outage, a lock, every connection busy.
        Error::Internal(_) | Error::Unavailable(_) => true,
        _ => false,
    }
}

/// A task stopped when this is dropped: a lease's renewal ends with its run, however the run
/// ends (an abort at shutdown too).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn after(d: Duration) -> podium_types::Timestamp {
    podium_types::Timestamp::now().after(d)
}

impl Podium {
    /// Carries out a leased operation, by its kind (the lease's end records how it ended):
    /// what it found or did, for its `result`.
    async fn operation_execute(&self, op: &OperationRow) -> Result<Option<OperationResult>, Error> {
        // Provisioning's futures are the largest by far: boxed, every running operation's task
        // is not as large as theirs (5.4 KiB instead of 13 KiB).
        let action = match &op.request {
            OperationRequest::Sync => return self.sync_execute(op).await,
            OperationRequest::Register => return self.register_execute(op).await,
            OperationRequest::Inspect => return self.inspect_execute(op).await,
            OperationRequest::Provision { .. } => {
                return Box::pin(self.provision_execute(op)).await;
            }
            OperationRequest::Deprovision => return Box::pin(self.deprovision_execute(op)).await,
            OperationRequest::Bios(action) => {
                let host = operation_host(self.datastore(), op).await?;
                let pm = pod_manager_load(self.datastore(), &host.pod_manager).await?;
                let driver = self.drivers().host(&pm, &host).await?;
                return Box::pin(crate::bios::execute(&driver, &host, action)).await;
            }
            OperationRequest::SecureBoot { enabled } => {
                let host = operation_host(self.datastore(), op).await?;
                let pm = pod_manager_load(self.datastore(), &host.pod_manager).await?;
                let driver = self.drivers().host(&pm, &host).await?;
                return Box::pin(crate::bios::secure_boot_execute(&driver, &host, *enabled)).await;
            }
            OperationRequest::FirmwareUpdate(update) => {
                let host = operation_host(self.datastore(), op).await?;
                let pm = pod_manager_load(self.datastore(), &host.pod_manager).await?;
                let resumed = crate::firmware::resumed(op)?;
                let driver = self.drivers().host(&pm, &host).await?;
                let held = Held::new(self.datastore(), &self.inner.operations.worker_id, op);
                let store = self.datastore();
                return Box::pin(crate::firmware::execute(
                    store, &driver, &held, &host, update, resumed,
                ))
                .await;
            }
            OperationRequest::Power(_) | OperationRequest::Boot(_) | OperationRequest::Media(_) => {
                &op.request
            }
        };
        let host = operation_host(self.datastore(), op).await?;
        self.host_action_execute(&host, action, op.claim_id.as_ref())
            .await
    }

    /// Sets how the worker runs operations; call before `spawn_background`.
    pub fn set_operation_settings(&self, settings: OperationSettings) {
        *self
            .inner
            .operations
            .settings
            .write()
            .expect("settings poisoned") = settings;
    }

    fn operation_settings(&self) -> OperationSettings {
        self.inner
            .operations
            .settings
            .read()
            .expect("settings poisoned")
            .clone()
    }

    /// One pass of the `leasing` task (`background/`): leases what is due while there is room.
    /// The task runs it when woken (an operation queued, a slot freed) and every half second
    /// (retries that came due, leases that expired). Answers how many run here now.
    pub(crate) async fn operations_fill(&self) -> Outcome {
        self.operations_lease_due().await;
        let running = self.inner.operations.running.load(Ordering::Acquire);
        Outcome::new(format!("{running} operations running in this process"))
            .count("running", running)
    }

    async fn operations_lease_due(&self) {
        let settings = self.operation_settings();
        let per_pod_manager = i64::try_from(settings.per_pod_manager).unwrap_or(i64::MAX);
        // The most this process runs at once: as many as it has driver calls in flight (a
        // running operation waits on its BMC inside a driver call, one at a time).
        let running_max = self.runtime().config().max_calls as usize;
        loop {
            let _leasing = self.inner.operations.leasing.read().await;
            if self.inner.operations.running.load(Ordering::Acquire) >= running_max
                || self.inner.operations.draining.load(Ordering::Acquire)
            {
                return;
            }
            let leased = self
                .datastore()
                .operation_lease(
                    &self.inner.operations.worker_id,
                    settings.lease,
                    per_pod_manager,
                )
                .await;
            let op = match leased {
                Ok(Some(op)) => op,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot lease operations");
                    return;
                }
            };
            self.inner.operations.running.fetch_add(1, Ordering::AcqRel);
            let (podium, settings, id) = (self.clone(), settings.clone(), op.id.clone());
            // Spawned under the lock, so the task's end (which takes it) finds its handle.
            let mut tasks = self.inner.operations.tasks.lock().expect("tasks poisoned");
            let task = tokio::spawn(async move {
                let id = op.id.clone();
                podium.operation_lease_run(op, &settings).await;
                let operations = &podium.inner.operations;
                operations.tasks.lock().expect("tasks poisoned").remove(&id);
                operations.running.fetch_sub(1, Ordering::AcqRel);
                operations.ended.notify_waiters();
                podium.operations_wake();
            });
            tasks.insert(id, task);
        }
    }

    /// Stops this process's worker (it is shutting down): leases nothing more, lets what runs
    /// finish for up to `grace`, then stops what still runs and hands it back to the queue, so
    /// another process (or this one, restarted) takes it at once rather than when its lease
    /// expires. Answers the operations handed back.
    pub(crate) async fn operations_shutdown(&self, grace: Duration) -> Vec<OperationId> {
        let operations = &self.inner.operations;
        operations.draining.store(true, Ordering::Release);
        // Waits for a lease under way to be spawned (or given up): from here on what runs is
        // all in `running` and `tasks`.
        drop(operations.leasing.write().await);
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            // Registered before the count is read, so an end between the two still wakes it.
            let ended = operations.ended.notified();
            if operations.running.load(Ordering::Acquire) == 0 {
                break;
            }
            if tokio::time::timeout_at(deadline, ended).await.is_err() {
                break;
            }
        }
        // Stopped, and waited for: none of them writes after the hand-back.
        let still: Vec<_> = operations
            .tasks
            .lock()
            .expect("tasks poisoned")
            .drain()
            .map(|(_, task)| task)
            .collect();
        for task in &still {
            task.abort();
        }
        for task in still {
            let _ = task.await;
        }
        match self
            .datastore()
            .operations_hand_back(&operations.worker_id)
            .await
        {
            Ok(ids) => ids,
            Err(e) => {
                tracing::error!(error = %e, "cannot hand back running operations: they are taken over when their leases expire");
                Vec::new()
            }
        }
    }

    /// Runs one leased operation, renewing its lease meanwhile, and records how it ended.
    async fn operation_lease_run(&self, op: OperationRow, settings: &OperationSettings) {
        let owner = self.inner.operations.worker_id.clone();
        let lost = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let renewer = AbortOnDrop({
            let (podium, id, owner, lost) =
                (self.clone(), op.id.clone(), owner.clone(), lost.clone());
            let (every, lease) = (settings.lease / 3, settings.lease);
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    match podium
                        .datastore()
                        .operation_renew(&id, &owner, after(lease))
                        .await
                    {
                        Ok(true) => {}
                        Ok(false) => {
                            lost.store(true, std::sync::atomic::Ordering::Release);
                            return;
                        }
                        Err(e) => {
                            tracing::warn!(operation = %id, error = %e, "cannot renew a lease")
                        }
                    }
                }
            })
        });
        tracing::debug!(operation = %op.id, kind = %op.kind(), attempt = op.attempts, "operation running");
        let started = std::time::Instant::now();
        // A lease past the bound is one whose earlier ends were never recorded (its worker died,
        // or the datastore refused what it reported): it ends here rather than run forever.
        let result = if op.attempts > i64::from(settings.max_attempts) {
            Err(Error::Conflict {
                code: ErrorCode::OperationAbandoned,
                message: format!(
                    "gave up after {} attempts: the end of the last one was never recorded",
                    op.attempts - 1
                ),
            })
        } else {
            self.operation_execute(&op).await
        };
        drop(renewer);
        let took = started.elapsed();
        let now = podium_types::Timestamp::now();
        let recorded = match &result {
            Ok(found) => {
                self.inner
                    .metrics
                    .attempt(op.kind(), took, Attempt::Succeeded);
                self.datastore()
                    .operation_finish(&op.id, &owner, None, found.as_ref(), now)
                    .await
            }
            Err(e) if transient(e) && op.attempts < i64::from(settings.max_attempts) => {
                let exponent = u32::try_from(op.attempts.saturating_sub(1)).unwrap_or(u32::MAX);
                let delay = settings
                    .retry_base
                    .saturating_mul(2u32.saturating_pow(exponent.min(16)))
                    .min(RETRY_MAX);
                tracing::info!(operation = %op.id, attempt = op.attempts, retry_in = ?delay, error = %e, "operation failed transiently; will retry");
                self.inner.metrics.attempt(op.kind(), took, Attempt::Retry);
                self.datastore()
                    .operation_retry_later(&op.id, &owner, &e.to_string(), after(delay))
                    .await
            }
            Err(e) => {
                let message = if transient(e) {
                    format!("gave up after {} attempts: {e}", op.attempts)
                } else {
                    e.to_string()
                };
                tracing::warn!(operation = %op.id, host = ?op.host_id, error = %message, "operation failed");
                self.inner.metrics.attempt(op.kind(), took, Attempt::Failed);
                if let Some(host) = &op.host_id
                    && let Err(e) = self
                        .lifecycle()
                        .failed(host, op.kind(), &message, now)
                        .await
                {
                    tracing::error!(host = %host, error = %e, "cannot record the host's error");
                }
                if op.kind() == podium_types::OperationKind::Provision
                    && let (Some(claim), Some(host)) = (&op.claim_id, &op.host_id)
                    && let Err(e) = self.claim_fail_provisioning(claim, host, &message).await
                {
                    tracing::error!(claim = %claim, error = %e, "cannot release the host of a failed provisioning");
                }
                if op.kind() == podium_types::OperationKind::Deprovision
                    && let Some(claim) = &op.claim_id
                {
                    let reason = format!("deprovisioning failed, the host stays held: {message}");
                    if let Err(e) = self
                        .datastore()
                        .claim_set_state(
                            claim,
                            podium_types::ClaimState::Releasing,
                            Some(&reason),
                            now,
                        )
                        .await
                    {
                        tracing::error!(claim = %claim, error = %e, "cannot record a failed deprovisioning");
                    }
                }
                self.datastore()
                    .operation_finish(&op.id, &owner, Some(&message), None, now)
                    .await
            }
        };
        match recorded {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(operation = %op.id, lost = lost.load(std::sync::atomic::Ordering::Acquire), "the lease was lost; whoever holds it now records the end");
            }
            Err(e) => {
                tracing::error!(operation = %op.id, error = %e, "cannot record the end of an operation");
                // What it found or said may be what the datastore refused: record the failure
                // alone. If that fails too (an outage), the lease expires and the operation
                // runs again (its actions are idempotent), up to the bound of attempts.
                let message = format!("its end could not be recorded: {e}");
                if let Err(e) = self
                    .datastore()
                    .operation_finish(&op.id, &owner, Some(&message), None, now)
                    .await
                {
                    tracing::error!(operation = %op.id, error = %e, "cannot record the failure of an operation");
                }
            }
        }
    }
}
