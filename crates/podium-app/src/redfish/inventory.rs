//! The full inventories this process read lately for Redfish clients, by host (a leaf:
//! `Podium` holds it). A Redfish client reads an inventory one resource at a time (Ironic's
//! inspection: the `Processors` collection, then each processor, then the storage), and each
//! is answered from one read of the BMC: the reads of a host within [`FRESH`] share it, and
//! reads that come together wait for the one under way.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use podium_types::{HardwareInventory, HostId};
use tokio::sync::OnceCell;

/// How long an inventory read serves the reads of the same host after it.
pub(crate) const FRESH: Duration = Duration::from_secs(10);

/// The most hosts kept: past it (a client reading more hosts than this within [`FRESH`]),
/// every entry is forgotten.
const KEPT: usize = 10_000;

type Cell = Arc<OnceCell<Arc<HardwareInventory>>>;

#[derive(Debug, Default)]
pub(crate) struct Inventories(Mutex<HashMap<HostId, (Instant, Cell)>>);

impl Inventories {
    /// `host`'s inventory: the one read within [`FRESH`], or the one under way, or what `read`
    /// reads now. A failed read is kept for no one.
    pub(crate) async fn get_or_read<E, F>(
        &self,
        host: &HostId,
        read: impl FnOnce() -> F,
    ) -> Result<Arc<HardwareInventory>, E>
    where
        F: Future<Output = Result<HardwareInventory, E>>,
    {
        let cell = {
            let now = Instant::now();
            let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
            let stale = kept
                .get(host)
                .is_none_or(|(at, _)| now.duration_since(*at) >= FRESH);
            if stale {
                // What is no longer fresh serves no one: forgotten at each new read, so the map
                // holds only the hosts read within the last seconds.
                kept.retain(|_, (at, _)| now.duration_since(*at) < FRESH);
                if kept.len() >= KEPT {
                    kept.clear();
                }
                kept.insert(host.clone(), (now, Cell::default()));
            }
            kept.get(host)
                .map(|(_, cell)| cell.clone())
                .unwrap_or_default()
        };
        cell.get_or_try_init(|| async { read().await.map(Arc::new) })
            .await
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn reads_together_and_soon_after_share_one_and_a_failure_is_not_kept() {
        let kept = Inventories::default();
        let host = HostId::from("h".to_owned());
        let reads = AtomicUsize::new(0);
        let read = || async {
            reads.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok::<_, ()>(HardwareInventory::default())
        };
        let (a, b) = tokio::join!(kept.get_or_read(&host, read), kept.get_or_read(&host, read));
        assert!(a.is_ok() && b.is_ok());
        kept.get_or_read(&host, read).await.unwrap();
        assert_eq!(reads.load(Ordering::SeqCst), 1);

        let other = HostId::from("o".to_owned());
        let failed = kept
            .get_or_read(&other, || async { Err::<HardwareInventory, _>("down") })
            .await;
        assert_eq!(failed.unwrap_err(), "down");
        kept.get_or_read(&other, read).await.unwrap();
        assert_eq!(reads.load(Ordering::SeqCst), 2, "the failure was not kept");
    }
}
