//! Memory a burst of calls took goes back to the system.
//!
//! A burst of plugin calls (two hundred spinning steps, a discovery's thousand answers) grows
//! the C allocator's heaps, and glibc's `free` gives back only the top of a heap: after the
//! burst the process keeps its peak. A thread of the runtime looks every few seconds at how many
//! calls ended since it last looked and, after a burst, asks the allocator to return its free
//! pages (`malloc_trim`). Elsewhere than glibc it does nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often the thread looks.
const EVERY: Duration = Duration::from_secs(5);
/// Calls ended since the last look that make a burst.
const BURST: u64 = 64;

/// The calls that ended, counted by the runtime.
#[derive(Default)]
pub(crate) struct Ended(AtomicU64);

impl Ended {
    pub(crate) fn one(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Starts the thread; it ends with the runtime (when `ended` has no other owner).
pub(crate) fn spawn(ended: &Arc<Ended>) {
    let weak = Arc::downgrade(ended);
    std::thread::Builder::new()
        .name("podium-trim".into())
        .spawn(move || {
            let mut seen = 0;
            loop {
                std::thread::sleep(EVERY);
                let Some(ended) = weak.upgrade() else { return };
                let now = ended.0.load(Ordering::Relaxed);
                if now - seen >= BURST {
                    give_back();
                }
                seen = now;
            }
        })
        .expect("spawning the memory trim thread");
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn give_back() {
    // SAFETY: malloc_trim takes no pointer and is safe to call from any thread at any time.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn give_back() {}
