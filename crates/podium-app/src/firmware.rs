//! A host's firmware: its components read through its driver, and an update from an image, an
//! operation in the host's queue that starts the update at the BMC and follows the BMC's task to
//! its end, recording how far it is (`progress`) as it goes.
//!
//! An update is the one host action that is not idempotent (a second start flashes again). The
//! task the BMC answered is recorded before anything else happens, so an operation taken over
//! (after a crash, a shutdown or a transient failure) follows that task; one whose start was
//! under way when its process died is failed, not started again.

use std::time::Duration;

use podium_types::{
    ComponentUpdated, ErrorCode, FirmwareComponent, FirmwareKind, FirmwareUpdate,
    FirmwareUpdateProgress, FirmwareUpdated, OperationFilter, OperationKind, OperationProgress,
    OperationRequest, OperationResult, OperationStatus, Page, TaskState, Timestamp,
    UpdateTaskState,
};

use podium_runtime::{CallError, PluginError};

use crate::bios::{Asker, unsupported};
use crate::data::{Datastore, Host, OperationRow, PodManager};
use crate::drivers::Driver;
use crate::error::Error;
use crate::queue::Held;

/// How often the BMC's task is read.
const POLL: Duration = Duration::from_secs(5);
/// How long an update may run at the BMC before the operation gives up following it.
const DEADLINE: Duration = Duration::from_secs(2 * 60 * 60);
/// The most components one update targets.
const TARGETS_MAX: usize = 64;

/// Checks an update on its own (the image, the targets: a 422 naming the field) and that the
/// asker may update firmware: the update, its image as it is to be kept and sent. Nothing is
/// asked of the BMC.
pub(crate) fn update_checked(
    pm: &PodManager,
    asker: &Asker,
    mut update: FirmwareUpdate,
) -> Result<FirmwareUpdate, Error> {
    may_update(pm, asker)?;
    update.image_url = image_check("image_url", &update.image_url)?;
    targets_check(&update.targets)?;
    Ok(update)
}

/// Checks a checked update (`update_checked`) against the components as read now through
/// `driver` (a 422 naming the field), and that no other update of the host waits: the
/// operation to queue.
pub(crate) async fn update_request(
    store: &Datastore,
    driver: &Driver<'_>,
    host: &Host,
    update: FirmwareUpdate,
) -> Result<OperationRequest, Error> {
    let components = read(store, driver, host).await?;
    update_of_request(store, host, update, &components).await
}

/// Checks an update whose image is checked: its targets against `components` (the host's as
/// just read), and that no other update of the host waits: the operation to queue.
pub(crate) async fn update_of_request(
    store: &Datastore,
    host: &Host,
    update: FirmwareUpdate,
    components: &[FirmwareComponent],
) -> Result<OperationRequest, Error> {
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
    if let Some(other) = store.operation_list(&waiting, &page).await?.items.first() {
        return Err(Error::Conflict {
            code: ErrorCode::FirmwareUpdatePending,
            message: format!(
                "operation {} already updates host `{}`'s firmware: wait for its end",
                other.id, host.id
            ),
        });
    }
    Ok(OperationRequest::FirmwareUpdate(update))
}

/// The host's firmware components as its BMC reports them now; the BIOS's and the BMC's
/// versions kept with the host where they changed.
pub(crate) async fn read(
    store: &Datastore,
    driver: &Driver<'_>,
    host: &Host,
) -> Result<Vec<FirmwareComponent>, Error> {
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
    if let Err(e) = store
        .host_set_firmware_versions(&host.id, bios.as_deref(), bmc.as_deref())
        .await
    {
        tracing::warn!(host = %host.id, error = %e, "the firmware versions read were not kept");
    }
    Ok(components)
}

/// Where a `firmware_update` operation resumes, before anything is asked of the BMC: the
/// update a try before this one started (`Some`), or none started (`None`); a try stopped
/// while starting it fails, since whether the BMC took it is not known.
pub(crate) fn resumed(op: &OperationRow) -> Result<Option<FirmwareUpdateProgress>, Error> {
    match &op.progress {
        Some(OperationProgress::FirmwareUpdate(p)) if p.started => Ok(Some(p.clone())),
        Some(_) => Err(Error::Conflict {
            code: ErrorCode::FirmwareUpdateInterrupted,
            message: "an earlier try was stopped while starting the update (Podium \
                              stopped, or the BMC did not answer), so whether the BMC took it is \
                              not known: read the host's firmware before asking again"
                .into(),
        }),
        None => Ok(None),
    }
}

/// Carries out a `firmware_update` operation: starts the update (unless a try before this
/// one did), follows its task to the end, then reads the components again. Its result: the
/// task, and each target's version before and after.
pub(crate) async fn execute(
    store: &Datastore,
    driver: &Driver<'_>,
    held: &Held<'_>,
    host: &Host,
    update: &FirmwareUpdate,
    resumed: Option<FirmwareUpdateProgress>,
) -> Result<Option<OperationResult>, Error> {
    let mut progress = match resumed {
        Some(progress) => progress,
        None => update_start(store, driver, held, host, update).await?,
    };
    let started = progress.started_at.unwrap_or_else(Timestamp::now);
    let done = progress.state == Some(UpdateTaskState::Completed);
    if let (Some(task), false) = (progress.task.clone(), done) {
        task_follow(driver, held, host, &task, started, &mut progress).await?;
    }
    let after = read(store, driver, host).await?;
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
async fn task_follow(
    driver: &Driver<'_>,
    held: &Held<'_>,
    host: &Host,
    task: &str,
    started: Timestamp,
    progress: &mut FirmwareUpdateProgress,
) -> Result<(), Error> {
    loop {
        let read = driver.call().read_task(&host.system_id, task).await;
        let status = match read {
            Ok(status) => Some(status),
            Err(e) if e.is_transient() => {
                progress.last_error = Some(e.to_string());
                record(held, progress).await?;
                None
            }
            Err(CallError::Plugin {
                error: PluginError::NotFound(_),
                ..
            }) => {
                progress.state = Some(UpdateTaskState::Gone);
                record(held, progress).await?;
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
                record(held, progress).await?;
            }
            match status.state {
                TaskState::Completed => return Ok(()),
                TaskState::Failed => {
                    return Err(Error::Conflict {
                        code: ErrorCode::FirmwareUpdateFailed,
                        message: format!("the BMC's task {task} failed{}", said(&status.messages)),
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
async fn update_start(
    store: &Datastore,
    driver: &Driver<'_>,
    held: &Held<'_>,
    host: &Host,
    update: &FirmwareUpdate,
) -> Result<FirmwareUpdateProgress, Error> {
    let components = read(store, driver, host).await?;
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
    let marked = held
        .progress(
            Some(&OperationProgress::FirmwareUpdate(progress.clone())),
            true,
        )
        .await?;
    if !marked {
        return Err(Error::Unavailable(format!(
            "operation {} was taken over, or started by another try",
            held.op.id
        )));
    }
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
                held.progress(None, false).await?;
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
    record(held, &progress).await?;
    Ok(progress)
}

/// Records how far the update is; a lease lost stops it.
async fn record(held: &Held<'_>, progress: &FirmwareUpdateProgress) -> Result<(), Error> {
    let kept = held
        .progress(
            Some(&OperationProgress::FirmwareUpdate(progress.clone())),
            false,
        )
        .await?;
    if kept {
        Ok(())
    } else {
        Err(Error::Unavailable(format!(
            "operation {} was taken over by another worker",
            held.op.id
        )))
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
