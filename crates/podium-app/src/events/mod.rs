//! Events: `GET /v1/events` streams every change of a claim, a host or an operation that the
//! caller may see, in the order the changes were committed. The database records them itself
//! (triggers, `podium-store`'s migration 0016) in the transaction of the change, so a watcher
//! that resumes after the last event it saw misses none; the expiry task forgets them after
//! [`RETENTION`]. A tenant sees the events of its claims, of the hosts bound to them and of the
//! operations run for them; an admin sees every one.

pub(crate) mod clock;
pub(crate) mod streams;

use std::time::Duration;

use crate::data::{EventHorizon, EventRow, host_find};
use podium_types::views::{ClaimEventView, EventView, HostEventView, OperationEventView};
use podium_types::{ClaimId, EventFilter, EventKind, HostId, HostState, OperationId, ShownState};
use serde_json::Value;

use crate::app::Podium;
use crate::auth::Caller;
use crate::error::Error;

/// How long events are kept by default: a watcher may resume after a disconnection this long.
pub const RETENTION: Duration = Duration::from_secs(86_400);

pub use streams::DEFAULT_PER_TOKEN as STREAMS_PER_TOKEN;

/// What a caller refused one more stream is told to wait before it asks again, in seconds.
const STREAM_RETRY_AFTER_SECONDS: u32 = 10;

/// The most events one read answers.
const BATCH: u32 = 500;

/// Where a watcher starts: after which event, and whether events it asked for were forgotten.
#[derive(Clone, Debug)]
pub struct EventStart {
    pub after: i64,
    /// The events after the one asked for up to this one are forgotten (the retention passed).
    pub forgotten_through: Option<i64>,
}

/// A watcher's reading: what it may see and where it is.
#[derive(Debug)]
pub struct EventReader {
    caller: Caller,
    filter: EventFilter,
    after: i64,
    horizon: tokio::sync::watch::Receiver<EventHorizon>,
    stopping: tokio::sync::watch::Receiver<bool>,
    /// Counts the stream against its token's bound until it ends.
    _permit: streams::StreamPermit,
}

impl Podium {
    /// Checks what `caller` asks to watch and where from (`after`: the last event it saw; none:
    /// the next change). A tenant's filter is narrowed to its own; a claim, host or operation named
    /// must be one the caller sees.
    pub async fn events_watch(
        &self,
        caller: &Caller,
        mut filter: EventFilter,
        after: Option<i64>,
    ) -> Result<(EventReader, EventStart), Error> {
        if let Caller::Tenant { tenant_id, .. } = caller {
            filter.tenant = Some(tenant_id.clone());
        }
        if let Some(claim) = &filter.claim {
            self.datastore()
                .claim_get(caller.scope(), claim)
                .await?
                .ok_or_else(|| Error::not_found("claim", claim))?;
        }
        if let Some(host) = &filter.host {
            self.event_host_check(caller, host).await?;
        }
        if let Some(operation) = &filter.operation {
            let missing = || Error::not_found("operation", operation);
            let op = self
                .datastore()
                .operation_get(operation)
                .await?
                .ok_or_else(missing)?;
            if let Caller::Tenant { .. } = caller {
                let claim = op.claim_id.ok_or_else(missing)?;
                self.datastore()
                    .claim_get(caller.scope(), &claim)
                    .await?
                    .ok_or_else(missing)?;
            }
        }
        let horizon = self.datastore().events_horizon().await?;
        let newest = horizon.newest.max(horizon.forgotten_through);
        let start = match after {
            None => EventStart {
                after: horizon.newest,
                forgotten_through: None,
            },
            Some(n) if n < 0 => {
                return Err(Error::invalid(
                    "Last-Event-ID",
                    "must be an event's seq (0 or more)",
                ));
            }
            Some(n) if n > newest => {
                return Err(Error::invalid(
                    "Last-Event-ID",
                    format!("is after the newest event ({newest})"),
                ));
            }
            Some(n) if n < horizon.forgotten_through => EventStart {
                after: horizon.forgotten_through,
                forgotten_through: Some(horizon.forgotten_through),
            },
            Some(n) => EventStart {
                after: n,
                forgotten_through: None,
            },
        };
        let streams = self
            .inner
            .event_streams
            .get_or_init(|| streams::StreamCounts::new(streams::DEFAULT_PER_TOKEN));
        let permit = streams
            .open(caller.token_id())
            .ok_or_else(|| Error::TooManyRequests {
                message: format!(
                    "this token holds {} event streams open, the most one token may hold here: \
                     close one first (the admin sets the bound: --event-streams-per-token)",
                    streams.per_token()
                ),
                retry_after_seconds: STREAM_RETRY_AFTER_SECONDS,
            })?;
        let (horizon, stopping) = self.inner.events.subscribe(self.datastore());
        let reader = EventReader {
            _permit: permit,
            caller: caller.clone(),
            filter,
            after: start.after,
            horizon,
            stopping,
        };
        Ok((reader, start))
    }

    /// The next events `reader` may see, waiting for them up to `wait`: none when the wait ran
    /// out, `None` when the process shuts down (the watcher resumes on another, or on this one
    /// restarted).
    pub async fn events_next(
        &self,
        reader: &mut EventReader,
        wait: Duration,
    ) -> Result<Option<Vec<EventView>>, Error> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if *reader.stopping.borrow() {
                return Ok(None);
            }
            let through = reader.horizon.borrow_and_update().newest;
            if through > reader.after {
                let rows = self
                    .datastore()
                    .events_between(reader.after, through, &reader.filter, BATCH)
                    .await?;
                reader.after = match rows.last() {
                    Some(last) if rows.len() == BATCH as usize => last.seq,
                    _ => through,
                };
                if !rows.is_empty() {
                    return rows
                        .into_iter()
                        .map(|row| view(&reader.caller, row))
                        .collect::<Result<_, _>>()
                        .map(Some);
                }
            }
            tokio::select! {
                changed = reader.horizon.changed() => {
                    if changed.is_err() {
                        return Ok(None);
                    }
                }
                _ = reader.stopping.changed() => {}
                () = tokio::time::sleep_until(deadline) => return Ok(Some(Vec::new())),
            }
        }
    }

    /// Whether `caller` sees the host: an admin any host, a tenant the hosts of its claims.
    async fn event_host_check(&self, caller: &Caller, id: &HostId) -> Result<(), Error> {
        let missing = || Error::not_found("host", id);
        let host = host_find(self.datastore(), id).await?.ok_or_else(missing)?;
        if let Caller::Tenant { .. } = caller {
            let claim = host.claim_id.ok_or_else(missing)?;
            self.datastore()
                .claim_get(caller.scope(), &claim)
                .await?
                .ok_or_else(missing)?;
        }
        Ok(())
    }

    /// Sets how many event streams one token may hold open in this process (before any is
    /// opened); by default [`streams::DEFAULT_PER_TOKEN`].
    pub fn set_event_streams_per_token(&self, per_token: usize) {
        let _ = self
            .inner
            .event_streams
            .set(streams::StreamCounts::new(per_token));
    }

    /// Sets how long change events are kept (before the background tasks start); by default
    /// [`RETENTION`].
    pub fn set_event_retention(&self, retention: Duration) {
        let _ = self.inner.event_retention.set(retention);
    }

    /// Forgets the events past their retention (the expiry task); answers how many.
    pub(crate) async fn events_expire(&self) -> Result<u64, Error> {
        let retention = *self.inner.event_retention.get().unwrap_or(&RETENTION);
        let before = podium_types::Timestamp::now().before(retention);
        Ok(self.datastore().events_forget_before(before).await?)
    }
}

/// An event as `caller` sees it: a tenant never sees a host's pod manager or error.
fn view(caller: &Caller, row: EventRow) -> Result<EventView, Error> {
    view_for(matches!(caller, Caller::Admin { .. }), row)
}

/// An event as an admin (`admin`) or a tenant sees it.
pub(crate) fn view_for(admin: bool, row: EventRow) -> Result<EventView, Error> {
    let data = &row.data;
    let text = |key: &str| data[key].as_str().map(str::to_owned);
    let flag = |key: &str| {
        data[key]
            .as_bool()
            .unwrap_or_else(|| data[key].as_i64() == Some(1))
    };
    let seq = row.seq;
    let corrupt = |what: &str| Error::Internal(anyhow::anyhow!("stored event {seq}: bad {what}"));
    let mut event = EventView {
        seq: row.seq,
        at: row.at,
        kind: row.kind,
        action: row.action,
        claim: None,
        host: None,
        operation: None,
    };
    match row.kind {
        EventKind::Claim => {
            event.claim = Some(ClaimEventView {
                id: ClaimId::from(row.resource_id),
                tenant: row.tenant_id.ok_or_else(|| corrupt("no tenant"))?,
                pod_manager: row.pod_manager.unwrap_or_default().into(),
                state: parse(data, "state").map_err(|_| corrupt("state"))?,
                online: flag("online"),
                reason: text("reason"),
                host: text("host_id").map(HostId::from),
            });
        }
        EventKind::Host => {
            let state: HostState = parse(data, "state").map_err(|_| corrupt("state"))?;
            let error = match (text("error_type"), text("error_message")) {
                (Some(kind), Some(message)) => Some(format!("{kind}: {message}")),
                (Some(kind), None) => Some(kind),
                _ => None,
            };
            event.host = Some(HostEventView {
                id: HostId::from(row.resource_id),
                provisioning_state: if flag("maintenance") {
                    ShownState::Maintenance
                } else {
                    ShownState::In(state)
                },
                power_state: text("power_state")
                    .map(|p| p.parse())
                    .transpose()
                    .map_err(|_| corrupt("power state"))?
                    .unwrap_or_default(),
                claim: text("claim_id").map(ClaimId::from),
                pod_manager: admin.then(|| row.pod_manager.unwrap_or_default().into()),
                error: error.filter(|_| admin),
            });
        }
        EventKind::Operation => {
            event.operation = Some(OperationEventView {
                id: OperationId::from(row.resource_id),
                kind: parse(data, "kind").map_err(|_| corrupt("kind"))?,
                status: parse(data, "status").map_err(|_| corrupt("status"))?,
                attempts: data["attempts"].as_i64().unwrap_or(0),
                error: text("error"),
                next_attempt_at: text("next_attempt_at")
                    .map(|t| t.parse())
                    .transpose()
                    .map_err(|_| corrupt("next attempt"))?,
                host: row.host_id,
                claim: row.claim_id,
            });
        }
    }
    Ok(event)
}

/// A name stored under `key`, parsed.
fn parse<T: std::str::FromStr>(data: &Value, key: &str) -> Result<T, ()> {
    data[key].as_str().ok_or(())?.parse().map_err(|_| ())
}
