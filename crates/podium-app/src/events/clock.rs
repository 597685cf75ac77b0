//! The event clock: the newest event's number, read from the database after each write of this
//! process and five times a second (another process's writes) while anyone watches, so that a
//! process's watchers share one query and each reads the events only when there are new ones.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::data::{Datastore, EventHorizon};
use tokio::sync::watch;

/// How often the newest event is read while anyone watches, whatever this process writes.
const TICK: Duration = Duration::from_millis(200);

/// The newest event as last read; its reader runs from the first watcher on.
#[derive(Debug, Default)]
pub(crate) struct EventClock {
    horizon: Arc<watch::Sender<EventHorizon>>,
    started: std::sync::OnceLock<()>,
    /// Set when the process shuts down: every watcher's stream ends (a listener drains only
    /// once its connections close).
    stopping: watch::Sender<bool>,
}

impl EventClock {
    /// A receiver of the newest event and one of the shutdown; starts the reader on the first
    /// call.
    pub(crate) fn subscribe(
        &self,
        datastore: &Datastore,
    ) -> (watch::Receiver<EventHorizon>, watch::Receiver<bool>) {
        self.started.get_or_init(|| {
            tokio::spawn(tick(Arc::downgrade(&self.horizon), datastore.clone()));
        });
        (self.horizon.subscribe(), self.stopping.subscribe())
    }

    /// Ends every watcher's stream, now and from now on.
    pub(crate) fn stop(&self) {
        self.stopping.send_replace(true);
    }
}

/// Reads the newest event while anyone watches; ends with the clock.
async fn tick(horizon: Weak<watch::Sender<EventHorizon>>, datastore: Datastore) {
    let mut failing = false;
    loop {
        // This process's writes are seen at once; another's on the tick.
        tokio::select! {
            () = tokio::time::sleep(TICK) => {}
            () = datastore.written() => {}
        }
        let Some(sender) = horizon.upgrade() else {
            return;
        };
        if sender.receiver_count() == 0 {
            continue;
        }
        match datastore.events_horizon().await {
            Ok(now) => {
                failing = false;
                sender.send_if_modified(|seen| {
                    let changed = *seen != now;
                    *seen = now;
                    changed
                });
            }
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "cannot read the newest event; watchers wait");
            }
            Err(_) => {}
        }
    }
}
