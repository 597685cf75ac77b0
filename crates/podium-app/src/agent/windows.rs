//! How many lookups and heartbeats each host's deploy agent sent this minute: the bound on
//! the agent's API, which answers without a token (a leaf: `Podium` holds it).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::Error;
use podium_types::HostId;

/// How many lookups, and how many heartbeats, one host's agent may send in a minute.
pub(crate) const PER_MINUTE: u32 = 60;

/// Per host and kind of call (`lookup`, `heartbeat`): when its minute began, and how many came.
type Counts = HashMap<(HostId, &'static str), (Instant, u32)>;

/// Per host, how many lookups and heartbeats came in the current minute.
#[derive(Debug, Default)]
pub(crate) struct Windows {
    counts: Mutex<Counts>,
}

impl Windows {
    /// Counts one `kind` of call for `host`; refused past [`PER_MINUTE`] in a minute.
    pub(crate) fn count(&self, host: &HostId, kind: &'static str) -> Result<(), Error> {
        let now = Instant::now();
        let mut counts = self.counts.lock().expect("agent windows poisoned");
        if counts.len() > 100_000 {
            counts.retain(|_, (start, _)| now.duration_since(*start) < Duration::from_secs(60));
        }
        let (start, n) = counts.entry((host.clone(), kind)).or_insert((now, 0));
        if now.duration_since(*start) >= Duration::from_secs(60) {
            *start = now;
            *n = 0;
        }
        *n += 1;
        if *n > PER_MINUTE {
            let left = Duration::from_secs(60).saturating_sub(now.duration_since(*start));
            return Err(Error::TooManyRequests {
                message: format!("more than {PER_MINUTE} agent {kind}s for this host in a minute"),
                retry_after_seconds: u32::try_from(left.as_secs()).unwrap_or(60).max(1),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_gets_sixty_lookups_a_minute() {
        let windows = Windows::default();
        let host = HostId::generate();
        for _ in 0..PER_MINUTE {
            windows.count(&host, "lookup").unwrap();
        }
        assert!(matches!(
            windows.count(&host, "lookup"),
            Err(Error::TooManyRequests { .. })
        ));
        windows.count(&host, "heartbeat").unwrap();
        windows.count(&HostId::generate(), "lookup").unwrap();
    }
}
