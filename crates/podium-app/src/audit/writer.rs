//! The audit log's writer: a request hands it its event and waits for the commit; it writes
//! whatever queued meanwhile in one transaction (a group commit), so a burst of writes costs one
//! commit of the log, not one each, and no answer is sent before its event is stored.

use std::sync::OnceLock;

use crate::data::{AuditRow, Datastore};
use tokio::sync::{mpsc, oneshot};

/// The most events one transaction writes.
const BATCH_MAX: usize = 1024;

type Queued = (AuditRow, oneshot::Sender<Result<(), String>>);

/// The queue into the writer task, started with the first event.
#[derive(Debug, Default)]
pub(crate) struct AuditWriter {
    queue: OnceLock<mpsc::UnboundedSender<Queued>>,
}

impl AuditWriter {
    /// Stores `event`, with those queued beside it; why not, when it could not be.
    pub(crate) async fn write(&self, datastore: &Datastore, event: AuditRow) -> Result<(), String> {
        let queue = self.queue.get_or_init(|| {
            let (sender, receiver) = mpsc::unbounded_channel();
            tokio::spawn(run(datastore.clone(), receiver));
            sender
        });
        let (done, written) = oneshot::channel();
        queue
            .send((event, done))
            .map_err(|_| "the audit writer has stopped".to_owned())?;
        written
            .await
            .map_err(|_| "the audit writer has stopped".to_owned())?
    }
}

/// Writes what is queued, a batch at a time, until every sender is gone.
async fn run(datastore: Datastore, mut receiver: mpsc::UnboundedReceiver<Queued>) {
    let mut batch = Vec::new();
    while receiver.recv_many(&mut batch, BATCH_MAX).await > 0 {
        let (events, waiting): (Vec<AuditRow>, Vec<_>) = batch.drain(..).unzip();
        let outcome = datastore
            .audit_insert(&events)
            .await
            .map_err(|e| e.to_string());
        for done in waiting {
            let _ = done.send(outcome.clone());
        }
    }
}
