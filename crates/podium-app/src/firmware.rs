//! A host's firmware: its components read through its driver, and an update from an image, an
//! operation in the host's queue that starts the update at the BMC and follows the BMC's task to
//! its end, recording how far it is (`progress`) as it goes.
//!
//! An update is the one host action that is not idempotent (a second start flashes again). The
//! task the BMC answered is recorded before anything else happens, so an operation taken over
//! (after a crash, a shutdown or a transient failure) follows that task; one whose start was
//! under way when its process died is failed, not started again.

use std::time::Duration;

use podium_types::views::OperationView;
use podium_types::{
    ComponentUpdated, ErrorCode, FirmwareComponent, FirmwareKind, FirmwareUpdate,
    FirmwareUpdateProgress, FirmwareUpdated, OperationFilter, OperationKind, OperationProgress,
    OperationRequest, OperationResult, OperationStatus, Page, TaskState, Timestamp,
    UpdateTaskState,
};

use podium_runtime::{CallError, PluginError};

use crate::app::Podium;
use crate::bios::{Asker, unsupported};
use crate::data::{Host, OperationRow, PodManager};
use crate::error::Error;

/// How often the BMC's task is read.
const POLL: Duration = Duration::from_secs(5);
/// How long an update may run at the BMC before the operation gives up following it.
const DEADLINE: Duration = Duration::from_secs(2 * 60 * 60);
/// The most components one update targets.
const TARGETS_MAX: usize = 64;

impl Podium {
    /// Checks an update (the image, the targets against the components as read now: a 422
    /// naming the field) and queues it, where the asker may update firmware and no other
    /// update of the host waits.
    pub(crate) async fn firmware_update(
        &self,
        host: &Host,
        pm: &PodManager,
        mut update: FirmwareUpdate,
        asker: &Asker,
    ) -> Result<OperationView, Error> {
        may_update(pm, asker)?;
        update.image_url = image_check("image_url", &update.image_url)?;
        targets_check(&update.targets)?;
        let components = self.firmware_read(pm, host).await?;
        self.firmware_update_of(host, update, asker, &components)
            .await
    }

    /// Queues an update whose image is checked, its targets checked against `components` (the
    /// host's as just read).
    pub(crate) async fn firmware_update_of(
        &self,
        host: &Host,
        update: FirmwareUpdate,
        asker: &Asker,
        components: &[FirmwareComponent],
    ) -> Result<OperationView, Error> {
        for (i, target) in update.targets.iter().enumerate() {
            let field = format!("targets[{i}]");
            match components.iter().find(|c| &c.id == target) {
                None => {
                    return Err(Error::invalid(
                        &field,
                        format!(
                            "the host has no firmware component `{target}` (its components: {})",
                            ids(components)
                        ),
                    ));
                }
                Some(c) if !c.updateable => {
                    return Err(Error::invalid(
                        &field,
                        format!("the BMC says `{target}` ({}) cannot be updated", c.name),
                    ));
                }
                Some(_) => {}
            }
        }
        // One update of a host at a time: a second (a request sent twice) would flash again.
        let waiting = OperationFilter {
            host: Some(host.id.clone()),
            statuses: vec![OperationStatus::Queued, OperationStatus::Running],
            kinds: vec![OperationKind::FirmwareUpdate],
            ..OperationFilter::default()
        };
        let page = Page {
            limit: 1,
            cursor: None,
        };
        if let Some(other) = self
            .datastore()
            .operation_list(&waiting, &page)
            .await?
            .items
            .first()
        {
            return Err(Error::Conflict {
                code: ErrorCode::FirmwareUpdatePending,
                message: format!(
                    "operation {} already updates host `{}`'s firmware: wait for its end",
                    other.id, host.id
                ),
            });
        }
        self.firmware_queue(host, OperationRequest::FirmwareUpdate(update), asker)
            .await
    }

    pub(crate) async fn firmware_read(
        &self,
        pm: &PodManager,
        host: &Host,
    ) -> Result<Vec<FirmwareComponent>, Error> {
        let driver = self.host_driver(pm, host).await?;
        let components = driver
            .call()
            .read_firmware(&host.system_id)
            .await
            .map_err(|e| unsupported(host, ErrorCode::FirmwareUnsupported, "firmware", e))?;
        // The versions the Redfish face shows (`BiosVersion`, the manager's `FirmwareVersion`),
        // kept where they changed: the first component of each kind (the driver lists the
        // running one first, `docs/hardware.md`).
        let version = |kind| {
            components
                .iter()
                .find(|c| c.kind == kind)
                .and_then(|c| c.version.clone())
        };
        let (bios, bmc) = (version(FirmwareKind::Bios), version(FirmwareKind::Bmc));
        // What was read is answered even where it cannot be kept.
        if let Err(e) = self
            .datastore()
            .host_set_firmware_versions(&host.id, bios.as_deref(), bmc.as_deref())
            .await
        {
            tracing::warn!(host = %host.id, error = %e, "the firmware versions read were not kept");
        }
        Ok(components)
    }

    /// Carries out a `firmware_update` operation: starts the update (unless a try before this
    /// one did), follows its task to the end, then reads the components again. Its result: the
    /// task, and each target's version before and after.
    pub(crate) async fn firmware_update_execute(
        &self,
        op: &OperationRow,
        update: &FirmwareUpdate,
    ) -> Result<Option<OperationResult>, Error> {
        let host = self.operation_host(op).await?;
        let pm = self.pod_manager_load(&host.pod_manager).await?;
        let mut progress = match &op.progress {
            Some(OperationProgress::FirmwareUpdate(p)) if p.started => p.clone(),
            Some(_) => {
                return Err(Error::Conflict {
                    code: ErrorCode::FirmwareUpdateInterrupted,
                    message: "an earlier try was stopped while starting the update (Podium \
                              stopped, or the BMC did not answer), so whether the BMC took it is \
                              not known: read the host's firmware before asking again"
                        .into(),
                });
            }
            None => self.firmware_update_start(op, &pm, &host, update).await?,
        };
        let started = progress.started_at.unwrap_or_else(Timestamp::now);
        let done = progress.state == Some(UpdateTaskState::Completed);
        if let (Some(task), false) = (progress.task.clone(), done) {
            self.firmware_task_follow(op, &pm, &host, &task, started, &mut progress)
                .await?;
        }
        let after = self.firmware_read(&pm, &host).await?;
        let components = update
            .targets
            .iter()
            .map(|id| {
                let now = after.iter().find(|c| &c.id == id);
                ComponentUpdated {
                    id: id.clone(),
                    name: now.map(|c| c.name.clone()),
                    version_before: progress.before.get(id).cloned().flatten(),
                    version: now.and_then(|c| c.version.clone()),
                }
            })
            .collect();
        Ok(Some(OperationResult::FirmwareUpdate(FirmwareUpdated {
            task: progress.task,
            messages: progress.messages,
            components,
        })))
    }

    /// Follows the BMC's task to its end, recording its state, percent and messages as they
    /// change. A read of the task that fails transiently (a BMC restarting, as one updating its
    /// own firmware does) is tried again at the next poll, until the deadline; a task the BMC
    /// no longer knows, once seen, has ended (its result is in the versions read after).
    async fn firmware_task_follow(
        &self,
        op: &OperationRow,
        pm: &PodManager,
        host: &Host,
        task: &str,
        started: Timestamp,
        progress: &mut FirmwareUpdateProgress,
    ) -> Result<(), Error> {
        loop {
            let driver = self.host_driver(pm, host).await?;
            let read = driver.call().read_task(&host.system_id, task).await;
            let status = match read {
                Ok(status) => Some(status),
                Err(e) if e.is_transient() => {
                    progress.last_error = Some(e.to_string());
                    self.operation_record_progress(op, progress).await?;
                    None
                }
                Err(CallError::Plugin {
                    error: PluginError::NotFound(_),
                    ..
                }) => {
                    progress.state = Some(UpdateTaskState::Gone);
                    self.operation_record_progress(op, progress).await?;
                    return Ok(());
                }
                Err(e) => {
                    return Err(unsupported(
                        host,
                        ErrorCode::FirmwareUnsupported,
                        "firmware",
                        e,
                    ));
                }
            };
            if let Some(status) = status {
                let before = progress.clone();
                progress.state = Some(status.state.into());
                progress.percent = status.percent;
                progress.messages = Some(status.messages.clone());
                progress.last_error = None;
                if *progress != before {
                    self.operation_record_progress(op, progress).await?;
                }
                match status.state {
                    TaskState::Completed => return Ok(()),
                    TaskState::Failed => {
                        return Err(Error::Conflict {
                            code: ErrorCode::FirmwareUpdateFailed,
                            message: format!(
                                "the BMC's task {task} failed{}",
                                said(&status.messages)
                            ),
                        });
                    }
                    TaskState::Running => {}
                }
            }
            if Timestamp::now() > started.after(DEADLINE) {
                return Err(Error::Conflict {
                    code: ErrorCode::FirmwareUpdateTimeout,
                    message: format!(
                        "the BMC's task {task} has run for over {} minutes; it may still run \
                         there",
                        DEADLINE.as_secs() / 60,
                    ),
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Starts an update at the BMC: the targets' versions before it and the task it answers
    /// are recorded, with a mark set before the start (only where no try has set one), so a
    /// try after this one never starts it again.
    async fn firmware_update_start(
        &self,
        op: &OperationRow,
        pm: &PodManager,
        host: &Host,
        update: &FirmwareUpdate,
    ) -> Result<FirmwareUpdateProgress, Error> {
        let components = self.firmware_read(pm, host).await?;
        let before = update
            .targets
            .iter()
            .map(|id| {
                let version = components
                    .iter()
                    .find(|c| &c.id == id)
                    .and_then(|c| c.version.clone());
                (id.clone(), version)
            })
            .collect();
        let mut progress = FirmwareUpdateProgress {
            started: false,
            before,
            ..FirmwareUpdateProgress::default()
        };
        let marked = self
            .datastore()
            .operation_progress(
                &op.id,
                &self.inner.operations.worker_id,
                op.attempts,
                Some(&OperationProgress::FirmwareUpdate(progress.clone())),
                true,
            )
            .await?;
        if !marked {
            return Err(Error::Unavailable(format!(
                "operation {} was taken over, or started by another try",
                op.id
            )));
        }
        let driver = self.host_driver(pm, host).await?;
        let task = match driver.call().update_firmware(&host.system_id, update).await {
            Ok(task) => task,
            Err(e) => {
                // Refused before anything started (unsupported, a request the BMC rejects):
                // a try after this one may start it. Any other failure (unreachable, a
                // timeout, a 5xx) may have come after the BMC took it: the mark stays, and a
                // try after this one says so rather than flash again.
                let refused = matches!(
                    &e,
                    CallError::Plugin {
                        error: PluginError::Unsupported(_)
                            | PluginError::InvalidInput(_)
                            | PluginError::NotFound(_)
                            | PluginError::Unauthorized(_)
                            | PluginError::Conflict(_),
                        ..
                    }
                );
                if refused {
                    self.datastore()
                        .operation_progress(
                            &op.id,
                            &self.inner.operations.worker_id,
                            op.attempts,
                            None,
                            false,
                        )
                        .await?;
                }
                return Err(unsupported(
                    host,
                    ErrorCode::FirmwareUnsupported,
                    "firmware updates",
                    e,
                ));
            }
        };
        progress.started = true;
        progress.started_at = Some(Timestamp::now());
        progress.state = Some(if task.is_some() {
            UpdateTaskState::Running
        } else {
            UpdateTaskState::Completed
        });
        progress.task = task;
        self.operation_record_progress(op, &progress).await?;
        Ok(progress)
    }

    /// Records how far an operation this process holds is; a lease lost stops it.
    async fn operation_record_progress(
        &self,
        op: &OperationRow,
        progress: &FirmwareUpdateProgress,
    ) -> Result<(), Error> {
        let held = self
            .datastore()
            .operation_progress(
                &op.id,
                &self.inner.operations.worker_id,
                op.attempts,
                Some(&OperationProgress::FirmwareUpdate(progress.clone())),
                false,
            )
            .await?;
        if held {
            Ok(())
        } else {
            Err(Error::Unavailable(format!(
                "operation {} was taken over by another worker",
                op.id
            )))
        }
    }
}

/// The image given in `field`: an http or https URL with no credentials in it (the request is
/// kept and shown), answered as it is to be kept and sent.
pub(crate) fn image_check(field: &str, image_url: &str) -> Result<String, Error> {
    let url = crate::urls::http_url(field, image_url)?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::invalid(
            field,
            "holds credentials: an operation's request is kept and shown, so give the BMC a URL \
             it can fetch without them",
        ));
    }
    Ok(url.into())
}

fn targets_check(targets: &[String]) -> Result<(), Error> {
    if targets.is_empty() {
        return Err(Error::invalid(
            "targets",
            "name at least one component to update (GET the host's firmware for their ids)",
        ));
    }
    if targets.len() > TARGETS_MAX {
        return Err(Error::invalid(
            "targets",
            format!("at most {TARGETS_MAX} components update at once"),
        ));
    }
    for (i, t) in targets.iter().enumerate() {
        if targets[..i].contains(t) {
            return Err(Error::invalid(
                format!("targets[{i}]"),
                "names a component named before",
            ));
        }
    }
    Ok(())
}

fn ids(components: &[FirmwareComponent]) -> String {
    if components.is_empty() {
        return "none".into();
    }
    components
        .iter()
        .map(|c| format!("`{}`", c.id))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the BMC said, for a message: `: "..."; "..."`, or nothing.
fn said(messages: &[String]) -> String {
    if messages.is_empty() {
        return String::new();
    }
    format!(
        ": {}",
        messages
            .iter()
            .map(|m| format!("{m:?}"))
            .collect::<Vec<_>>()
            .join("; ")
    )
}

/// Whether `asker` may update the firmware of a host of `pm`: an admin may; a tenant where the
/// site lets tenants (a 403 otherwise).
pub(crate) fn may_update(pm: &PodManager, asker: &Asker) -> Result<(), Error> {
    match asker {
        Asker::Tenant(_) if !pm.tenant_firmware.firmware_update => Err(Error::Forbidden(
            "this site does not let tenants update firmware".into(),
        )),
        _ => Ok(()),
    }
}
