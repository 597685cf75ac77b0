//! The plugins' share of the process's threads: lanes, handed out fairly between pod managers.
//!
//! Plugin code runs on the same tokio workers as the API and the leasing, but only while its
//! call holds a **lane**, and there are fewer lanes than workers ([`default_lanes`]): however
//! many plugins spin, some workers never run plugin code. A running call gives its lane up at
//! the epoch tick (every millisecond) when another call waits for one, and queues again.
//!
//! A call that calls the host keeps its lane for a short call (a log line, its configuration, a
//! WASI random number: handing the lane over at each would make it wait a tick each time), but
//! a call that stays in the host past a tick (an HTTP answer it awaits, the pool's addresses, a
//! WASI clock it sleeps on) has its lane taken for a waiter by the epoch ticker
//! ([`Lanes::revoke_idle`]), and takes one again, in its turn, when the host returns.
//!
//! Lanes go round-robin between **shares** (a pod manager, or the plugin for a call with no
//! endpoint), each share's waiters in their order: a site with two hundred steps spinning waits
//! its turn behind a site with one, so the lone step waits one tick at most per lane.
//!
//! A lane is a [`Lane`] guard: dropped, it goes to the next share in the ring, or back to the
//! free count. A waiter that gave up (its call ended) is skipped; a lane sent to one that gave
//! up in the meantime comes back when the channel drops it.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// One fewer lane than the machine has threads, at least one: what `podium serve` runs with
/// unless told otherwise (`--plugin-lanes`).
pub fn default_lanes() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_sub(1)
        .max(1)
}

/// The process's lanes.
pub(crate) struct Lanes {
    state: Mutex<State>,
    /// The holds whose call is in the host with a lane, since when.
    in_host: Mutex<HashMap<u64, (Instant, Held)>>,
    next_hold: AtomicU64,
}

/// Where a hold keeps its lane.
type Held = Arc<Mutex<Option<Lane>>>;

struct State {
    free: usize,
    /// Shares with waiters, in the order they are served.
    ring: VecDeque<Arc<str>>,
    waiters: HashMap<Arc<str>, VecDeque<oneshot::Sender<Lane>>>,
}

/// The right to run plugin code on a worker; given back when dropped.
pub(crate) struct Lane {
    lanes: Option<Arc<Lanes>>,
}

impl Drop for Lane {
    fn drop(&mut self) {
        if let Some(lanes) = self.lanes.take() {
            Lanes::release(&lanes);
        }
    }
}

impl Lanes {
    pub(crate) fn new(lanes: usize) -> Arc<Lanes> {
        Arc::new(Lanes {
            state: Mutex::new(State {
                free: lanes.max(1),
                ring: VecDeque::new(),
                waiters: HashMap::new(),
            }),
            in_host: Mutex::default(),
            next_hold: AtomicU64::new(0),
        })
    }

    /// Whether a call waits for a lane.
    pub(crate) fn contended(&self) -> bool {
        !self.state.lock().expect("lanes lock").ring.is_empty()
    }

    /// Takes the lanes of calls that have been in the host for `idle` or longer, for the calls
    /// waiting (as many as wait); each takes one again when the host returns. The epoch ticker
    /// calls it every tick.
    pub(crate) fn revoke_idle(&self, now: Instant, idle: Duration) {
        if !self.contended() {
            return;
        }
        let idle: Vec<Held> = self
            .in_host
            .lock()
            .expect("lanes lock")
            .values()
            .filter(|(since, _)| now.saturating_duration_since(*since) >= idle)
            .map(|(_, held)| held.clone())
            .collect();
        for held in idle {
            let lane = held.lock().expect("hold lock").take();
            // Given to the next waiter, outside every lock.
            drop(lane);
            if !self.contended() {
                return;
            }
        }
    }

    /// A lane for `share`, when its turn comes; `None` if `deadline` passes first.
    pub(crate) async fn acquire(
        self: &Arc<Lanes>,
        share: &Arc<str>,
        deadline: Instant,
    ) -> Option<Lane> {
        let waiting = {
            let mut guard = self.state.lock().expect("lanes lock");
            let state = &mut *guard;
            if state.free > 0 {
                state.free -= 1;
                return Some(Lane {
                    lanes: Some(self.clone()),
                });
            }
            let (tx, rx) = oneshot::channel();
            let queue = state.waiters.entry(share.clone()).or_default();
            if queue.is_empty() {
                state.ring.push_back(share.clone());
            }
            queue.push_back(tx);
            rx
        };
        match tokio::time::timeout_at(deadline.into(), waiting).await {
            Ok(Ok(lane)) => Some(lane),
            // The sender went without a lane: only when the process shuts down.
            Ok(Err(_)) | Err(_) => None,
        }
    }

    /// Hands a lane given back to the next share in the ring, or counts it free.
    fn release(self: &Arc<Lanes>) {
        let mut guard = self.state.lock().expect("lanes lock");
        let state = &mut *guard;
        while let Some(share) = state.ring.pop_front() {
            let Some(queue) = state.waiters.get_mut(&share) else {
                continue;
            };
            let next = queue.pop_front();
            if queue.is_empty() {
                state.waiters.remove(&share);
            } else {
                state.ring.push_back(share);
            }
            let Some(tx) = next else { continue };
            match tx.send(Lane {
                lanes: Some(self.clone()),
            }) {
                Ok(()) => return,
                // That waiter gave up: the lane is not given back through its drop (this lock
                // is held) but offered to the next.
                Err(mut lane) => {
                    lane.lanes = None;
                }
            }
        }
        state.free += 1;
    }
}

/// A store's hold on a lane: where the lane its call holds is kept (the epoch callback's yield
/// gives it up and takes one again outside the store, so it is shared), the share it queues
/// in, and the call's deadline, past which it waits no longer.
#[derive(Clone)]
pub(crate) struct Hold {
    lanes: Arc<Lanes>,
    share: Arc<str>,
    deadline: Instant,
    held: Held,
    id: u64,
}

impl Hold {
    pub(crate) fn new(lanes: Arc<Lanes>, share: Arc<str>, deadline: Instant) -> Hold {
        let id = lanes.next_hold.fetch_add(1, Ordering::Relaxed);
        Hold {
            lanes,
            share,
            deadline,
            held: Arc::default(),
            id,
        }
    }

    /// The call calls the host: it keeps its lane, unless it stays there past a tick.
    pub(crate) fn enter_host(&self) {
        if self.held.lock().expect("hold lock").is_some() {
            self.lanes
                .in_host
                .lock()
                .expect("lanes lock")
                .insert(self.id, (Instant::now(), self.held.clone()));
        }
    }

    /// The host returns to the call: its lane, or the next one in its turn.
    pub(crate) async fn leave_host(&self) -> bool {
        self.lanes
            .in_host
            .lock()
            .expect("lanes lock")
            .remove(&self.id);
        self.take().await
    }

    /// Whether another call waits for a lane.
    pub(crate) fn contended(&self) -> bool {
        self.lanes.contended()
    }

    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Takes a lane unless one is held; false if the deadline passed first.
    pub(crate) async fn take(&self) -> bool {
        if self.held.lock().expect("hold lock").is_some() {
            return true;
        }
        match self.lanes.acquire(&self.share, self.deadline).await {
            Some(lane) => {
                *self.held.lock().expect("hold lock") = Some(lane);
                true
            }
            None => false,
        }
    }

    /// Gives the lane back, if one is held.
    pub(crate) fn give_up(&self) {
        let lane = self.held.lock().expect("hold lock").take();
        drop(lane);
    }
}

/// Takes a lane when the host enters the plugin's code, and again when the host returns to it
/// if its lane was taken meanwhile; marks the call as in the host when it calls the host (an
/// import or a libcall). The lane goes with the store, or at a tick (`Runtime::store`'s epoch
/// callback), or to a waiter while the call stays in the host ([`Lanes::revoke_idle`]).
///
/// A step's arguments are copied in by calls to its allocator: the lane taken for the first is
/// kept, not given back at each return.
pub(crate) struct LaneHook(pub(crate) Hold);

#[async_trait::async_trait]
impl<T: Send> wasmtime::CallHookHandler<T> for LaneHook {
    async fn handle_call_event(
        &self,
        _: wasmtime::StoreContextMut<'_, T>,
        hook: wasmtime::CallHook,
    ) -> wasmtime::Result<()> {
        match hook {
            wasmtime::CallHook::CallingWasm => {
                if !self.0.take().await {
                    return Err(crate::call::DeadlineExceeded.into());
                }
            }
            wasmtime::CallHook::ReturningFromHost => {
                if !self.0.leave_host().await {
                    return Err(crate::call::DeadlineExceeded.into());
                }
            }
            wasmtime::CallHook::CallingHost => self.0.enter_host(),
            wasmtime::CallHook::ReturningFromWasm => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[tokio::test]
    async fn lanes_go_round_robin_between_shares() {
        let lanes = Lanes::new(1);
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        let held = lanes.acquire(&a, far()).await.unwrap();
        // Three of share a queue before one of share b.
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for (i, share) in [&a, &a, &a, &b].into_iter().enumerate() {
            let (lanes, share, order) = (lanes.clone(), share.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let lane = lanes.acquire(&share, far()).await.unwrap();
                order.lock().unwrap().push(format!("{share}{i}"));
                tokio::task::yield_now().await;
                drop(lane);
            }));
            tokio::task::yield_now().await;
        }
        drop(held);
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), ["a0", "b3", "a1", "a2"]);
    }

    #[tokio::test]
    async fn a_call_in_the_host_past_a_tick_has_its_lane_taken_for_a_waiter() {
        let lanes = Lanes::new(1);
        let a = Hold::new(lanes.clone(), "a".into(), far());
        let b = Hold::new(lanes.clone(), "b".into(), far());
        assert!(a.take().await);
        // A short stay in the host keeps the lane: nobody waits.
        a.enter_host();
        lanes.revoke_idle(
            Instant::now() + Duration::from_secs(1),
            Duration::from_millis(1),
        );
        assert!(a.held.lock().unwrap().is_some());
        // b waits; a stays in the host past the tick: its lane goes to b.
        let waiting = tokio::spawn({
            let b = b.clone();
            async move { b.take().await }
        });
        tokio::task::yield_now().await;
        assert!(lanes.contended());
        lanes.revoke_idle(Instant::now(), Duration::from_secs(60));
        assert!(a.held.lock().unwrap().is_some(), "not yet past the tick");
        lanes.revoke_idle(
            Instant::now() + Duration::from_secs(1),
            Duration::from_millis(1),
        );
        assert!(waiting.await.unwrap());
        assert!(a.held.lock().unwrap().is_none());
        // a comes back from the host and waits for b's lane.
        let back = tokio::spawn({
            let a = a.clone();
            async move { a.leave_host().await }
        });
        tokio::task::yield_now().await;
        assert!(!back.is_finished());
        b.give_up();
        assert!(back.await.unwrap());
        assert!(a.held.lock().unwrap().is_some());
    }

    #[tokio::test]
    async fn a_waiter_that_gave_up_is_skipped_and_the_lane_is_not_lost() {
        let lanes = Lanes::new(1);
        let a: Arc<str> = "a".into();
        let held = lanes.acquire(&a, far()).await.unwrap();
        let soon = Instant::now() + Duration::from_millis(20);
        assert!(lanes.acquire(&a, soon).await.is_none(), "no lane was free");
        drop(held);
        let again = lanes.acquire(&a, far()).await;
        assert!(again.is_some());
        drop(again);
        assert_eq!(lanes.state.lock().unwrap().free, 1);
    }
}
