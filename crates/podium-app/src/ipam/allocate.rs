//! The allocation of addresses: a group commit per pool. Requests for one pool are queued and
//! committed in groups under the pool's lock (`cache.rs`): the pool's plugin proposes each
//! address against the free space this process knows, and one insert commits the group; a
//! proposal made against state another process changed meanwhile is retried, never committed
//! twice.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use podium_types::{ErrorCode, IpClaimId, IpPoolId};

use crate::app::Podium;
use crate::data::{Backend, IpAllocationRow, Missed};
use crate::error::Error;
use podium_runtime::{Allocations, CallContext, CallError, IpamHost, IpamRequest, PluginError};

use super::space::{Family, FreeSpace, parse_addr};

use super::cache::{Job, PoolState};
use super::pool::{IpClaim, IpPool};

/// How often an allocation is retried when the pool changed under it.
const COMMIT_ATTEMPTS: usize = 16;
/// How long a pool's cached free space is trusted where other processes may allocate too.
const STATE_MAX_AGE: Duration = Duration::from_secs(2);

/// The `allocations` import: the pool's free space as this process knows it.
struct PoolView {
    free: Arc<Mutex<FreeSpace>>,
    family: Family,
}

impl PoolView {
    fn parse(&self, text: &str) -> Option<u128> {
        let addr: IpAddr = text.trim().parse().ok()?;
        (Family::of(addr) == self.family).then(|| super::space::to_u128(addr))
    }
}

impl Allocations for PoolView {
    fn first_free<'a>(&'a mut self, start: &'a str, end: &'a str) -> BoxFuture<'a, Option<String>> {
        let found = match (self.parse(start), self.parse(end)) {
            (Some(start), Some(end)) => self
                .free
                .lock()
                .expect("free space poisoned")
                .first_free(start, end),
            _ => None,
        };
        let family = self.family;
        Box::pin(async move { found.map(|v| super::space::from_u128(family, v).to_string()) })
    }

    fn is_free<'a>(&'a mut self, address: &'a str) -> BoxFuture<'a, bool> {
        let free = self
            .parse(address)
            .is_some_and(|v| self.free.lock().expect("free space poisoned").is_free(v));
        Box::pin(async move { free })
    }
}

/// What `ip_choose` decided for a job.
enum Choice {
    /// Commit this.
    Insert(Box<Chosen>),
    /// Answered without a commit (the owner already holds an address).
    Answer(Box<Result<(IpClaim, bool), Error>>),
}

struct Chosen {
    row: IpAllocationRow,
    value: u128,
    /// Taken from the cached free space (to be given back if the commit misses).
    from_free: bool,
    wanted: Option<u128>,
    request: IpamRequest,
    network_data: Option<serde_json::Value>,
}

impl Podium {
    /// The pool's cached state, loaded (definition and free space) when there is none, or when
    /// other processes may have changed it since (PostgreSQL, after `STATE_MAX_AGE`).
    async fn ip_state<'a>(
        &self,
        slot: &'a mut Option<PoolState>,
        pool_id: &IpPoolId,
    ) -> Result<(&'a PoolState, bool), Error> {
        let stale = match slot.as_ref() {
            None => true,
            Some(state) => {
                self.datastore().backend() == Backend::Postgres
                    && state.loaded.elapsed() > STATE_MAX_AGE
            }
        };
        if stale {
            let loaded = Instant::now();
            let pool = self.ip_pool_load(pool_id).await?;
            let taken = self.datastore().ip_allocated_values(pool_id).await?;
            let free = FreeSpace::new(pool.space.free_extents(taken));
            *slot = Some(PoolState {
                pool,
                free: Arc::new(Mutex::new(free)),
                loaded,
            });
        }
        Ok((slot.as_ref().expect("loaded above"), stale))
    }

    /// The allocation itself, for any caller of the application that checked who is asking.
    ///
    /// Requests for one pool are committed in groups: each queues its job and hands the queue to
    /// a task that takes the pool's lock and processes every job waiting by then, committing
    /// them with one insert, so that under load one round trip to the datastore serves many.
    /// The task is spawned so that a caller that goes away (a client that disconnects) cannot
    /// cancel the jobs of others. A request that finds the pool idle is a group of one and
    /// runs in place.
    pub(crate) async fn ip_allocate(
        &self,
        pool_id: &IpPoolId,
        owner: &str,
        host: Option<IpamHost>,
        wanted: Option<&str>,
    ) -> Result<(IpClaim, bool), Error> {
        let entry = self.inner.ipam_locks.get(pool_id);
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job = Job {
            owner: owner.to_owned(),
            host,
            wanted: wanted.map(str::to_owned),
            reply,
        };
        // Alone: no group to form, and nobody else's job to lose if this caller goes away, so
        // the work is done here, without a task.
        if let Ok(mut slot) = entry.state.try_lock()
            && entry.queue.lock().expect("queue poisoned").is_empty()
        {
            use std::sync::atomic::Ordering;
            if entry.unfinished.swap(true, Ordering::AcqRel) {
                *slot = None;
            }
            self.ip_allocate_group(pool_id, &mut slot, vec![job]).await;
            entry.unfinished.store(false, Ordering::Release);
            drop(slot);
            return answer.await.unwrap_or_else(|_| {
                Err(Error::Internal(anyhow::anyhow!(
                    "the allocation ended without an answer"
                )))
            });
        }
        entry.queue.lock().expect("queue poisoned").push(job);
        let podium = self.clone();
        let pool_id = pool_id.to_owned();
        tokio::spawn(async move {
            let mut slot = entry.state.lock().await;
            if entry
                .unfinished
                .swap(false, std::sync::atomic::Ordering::AcqRel)
            {
                *slot = None;
            }
            let jobs = std::mem::take(&mut *entry.queue.lock().expect("queue poisoned"));
            if !jobs.is_empty() {
                podium.ip_allocate_group(&pool_id, &mut slot, jobs).await;
            }
        });
        answer.await.unwrap_or_else(|_| {
            Err(Error::Internal(anyhow::anyhow!(
                "the allocation task ended without an answer"
            )))
        })
    }

    /// Processes a group of jobs under the pool's lock: chooses an address for each (the plugin
    /// sees the ones chosen before it as taken), commits them with one insert, and retries the
    /// ones that missed from the datastore's state.
    async fn ip_allocate_group(
        &self,
        pool_id: &IpPoolId,
        slot: &mut Option<PoolState>,
        jobs: Vec<Job>,
    ) {
        let mut pending = jobs;
        for _ in 0..COMMIT_ATTEMPTS {
            if pending.is_empty() {
                return;
            }
            let (state, fresh) = match self.ip_state(slot, pool_id).await {
                Ok(state) => state,
                Err(e) => {
                    for job in pending {
                        let _ = job.reply.send(Err(e.duplicate()));
                    }
                    return;
                }
            };
            let mut chosen = Vec::with_capacity(pending.len());
            let mut retry = Vec::new();
            for job in pending.drain(..) {
                match self.ip_choose(state, &job).await {
                    Ok(Choice::Insert(insert)) => chosen.push((job, *insert)),
                    // Full as far as this process knows: addresses may have been released by
                    // another process since the cache was loaded; ask the datastore once more.
                    Err(Error::Conflict {
                        code: ErrorCode::PoolExhausted,
                        ..
                    }) if !fresh => retry.push(job),
                    Ok(Choice::Answer(answer)) => {
                        let _ = job.reply.send(*answer);
                    }
                    Err(e) => {
                        let _ = job.reply.send(Err(e));
                    }
                }
            }
            let reload = !retry.is_empty();
            pending.extend(retry);
            if chosen.is_empty() {
                if reload {
                    *slot = None;
                    continue;
                }
                return;
            }
            let rows: Vec<(IpAllocationRow, u128)> = chosen
                .iter()
                .map(|(_, c)| (c.row.clone(), c.value))
                .collect();
            let inserted = match self
                .datastore()
                .ip_insert_many(&rows, state.pool.row.generation)
                .await
            {
                Ok(inserted) => inserted,
                Err(e) => {
                    let e = Error::from(e);
                    for (job, _) in chosen {
                        let _ = job.reply.send(Err(e.duplicate()));
                    }
                    *slot = None;
                    return;
                }
            };
            let mut stale = reload;
            let committed: std::collections::HashSet<u128> = chosen
                .iter()
                .filter(|(_, c)| inserted.contains(&c.row.id))
                .map(|(_, c)| c.value)
                .collect();
            for (job, c) in chosen {
                if inserted.contains(&c.row.id) {
                    let _ = job
                        .reply
                        .send(Ok((state.pool.claim(c.row, c.network_data), true)));
                    continue;
                }
                let missed = self
                    .datastore()
                    .ip_missed(pool_id, &job.owner, c.value)
                    .await;
                // Give the address back unless someone (of this group or not) holds it now.
                match &missed {
                    Ok(Missed::OwnerHolds(_)) | Ok(Missed::PoolChanged)
                        if c.from_free && !committed.contains(&c.value) =>
                    {
                        state
                            .free
                            .lock()
                            .expect("free space poisoned")
                            .give(c.value);
                    }
                    Ok(Missed::Taken(_)) if !committed.contains(&c.value) => stale = true,
                    _ => {}
                }
                let answer = match missed {
                    Ok(Missed::OwnerHolds(existing)) => {
                        self.ip_claim_existing(&state.pool, &c.request, existing, c.wanted)
                            .await
                    }
                    Ok(Missed::Taken(holder)) if c.wanted.is_some() => Err(address_taken(
                        state.pool.space.addr(c.value),
                        &holder.owner,
                        "held by",
                    )),
                    // Another process took the address or changed the pool: choose again from
                    // what the datastore holds now.
                    Ok(Missed::Taken(_) | Missed::PoolChanged) => {
                        stale = true;
                        pending.push(job);
                        continue;
                    }
                    Err(e) => Err(e.into()),
                };
                let _ = job.reply.send(answer);
            }
            if stale {
                *slot = None;
            }
        }
        for job in pending {
            let _ = job.reply.send(Err(Error::Conflict {
                code: ErrorCode::PoolBusy,
                message: format!(
                    "the pool changed under {COMMIT_ATTEMPTS} attempts in a row; try again"
                ),
            }));
        }
    }

    /// Chooses the address of one job: its pre-allocation, the address it wants, or the
    /// plugin's proposal (then marked taken, so that the next job of the group gets another).
    async fn ip_choose(&self, state: &PoolState, job: &Job) -> Result<Choice, Error> {
        let pool = &state.pool;
        let pool_id = &pool.row.id;
        let owner = job.owner.as_str();
        let wanted = job
            .wanted
            .as_deref()
            .map(|w| parse_addr("address", w, Some(pool.space.family)))
            .transpose()?
            .map(super::space::to_u128);
        if let Some(w) = wanted
            && !pool.space.allocatable(w)
        {
            let addr = pool.space.addr(w);
            let why = if pool.space.gateway == Some(w) {
                "is the gateway"
            } else if pool.space.excluded.contains(&w) {
                "is reserved"
            } else {
                "is not in the pool's ranges"
            };
            return Err(Error::invalid("address", format!("{addr} {why}")));
        }
        let request = pool.request(owner, job.host.clone());
        let (value, from_free) = if let Some(&v) = pool.space.pre_allocations.get(owner) {
            if let Some(w) = wanted
                && w != v
            {
                return Err(Error::ConflictField {
                    code: ErrorCode::OwnerPreAllocated,
                    field: "address".into(),
                    message: format!(
                        "`{owner}` is pre-allocated {} in this pool, not {}",
                        pool.space.addr(v),
                        pool.space.addr(w)
                    ),
                });
            }
            (v, false)
        } else if let Some(w) = wanted {
            if let Some(other) = pool.space.pre_allocated_to(w) {
                return Err(address_taken(pool.space.addr(w), other, "pre-allocated to"));
            }
            // Taken as far as this process knows: say by whom (or hand the owner its own).
            let free = state.free.lock().expect("free space poisoned").take(w);
            if !free && let Some(holder) = self.datastore().ip_allocation_at(pool_id, w).await? {
                if holder.owner == owner {
                    let answer = self.ip_claim_existing(pool, &request, holder, wanted).await;
                    return Ok(Choice::Answer(Box::new(answer)));
                }
                return Err(address_taken(pool.space.addr(w), &holder.owner, "held by"));
            }
            (w, free)
        } else {
            match self.ip_propose(state, &request).await? {
                Some(v) => {
                    state.free.lock().expect("free space poisoned").take(v);
                    (v, true)
                }
                None => {
                    // The owner may hold one already: a repeated claim on a full pool.
                    if let Some(existing) = self
                        .datastore()
                        .ip_allocation_of_owner(pool_id, owner)
                        .await?
                    {
                        let answer = self.ip_claim_existing(pool, &request, existing, None).await;
                        return Ok(Choice::Answer(Box::new(answer)));
                    }
                    return Err(Error::Conflict {
                        code: ErrorCode::PoolExhausted,
                        message: format!("IP pool `{}` has no free address left", pool.row.name),
                    });
                }
            }
        };
        let address = pool.space.addr(value);
        // Rendered before the commit: a plugin that cannot write the document for this host
        // leaves no allocation behind.
        let network_data = match self.ip_network_data(pool, &request, address).await {
            Ok(nd) => nd,
            Err(e) => {
                if from_free {
                    state.free.lock().expect("free space poisoned").give(value);
                }
                return Err(e);
            }
        };
        Ok(Choice::Insert(Box::new(Chosen {
            row: IpAllocationRow {
                id: IpClaimId::generate(),
                pool_id: pool_id.clone(),
                address: address.to_string(),
                addr_key: super::space::key(value),
                owner: owner.to_owned(),
                created_at: podium_types::Timestamp::now(),
            },
            value,
            from_free,
            wanted,
            request,
            network_data,
        })))
    }

    async fn ip_claim_existing(
        &self,
        pool: &IpPool,
        request: &IpamRequest,
        existing: IpAllocationRow,
        wanted: Option<u128>,
    ) -> Result<(IpClaim, bool), Error> {
        if let Some(w) = wanted
            && super::space::from_key(&existing.addr_key) != Some(w)
        {
            return Err(Error::ConflictField {
                code: ErrorCode::OwnerHoldsAddress,
                field: "address".into(),
                message: format!(
                    "`{}` already holds {} in this pool; release it first",
                    existing.owner, existing.address
                ),
            });
        }
        let address = parse_addr("address", &existing.address, None)?;
        let network_data = self.ip_network_data(pool, request, address).await?;
        Ok((pool.claim(existing, network_data), false))
    }

    /// Asks the pool's plugin for a free address and checks the answer against the pool.
    async fn ip_propose(
        &self,
        state: &PoolState,
        request: &IpamRequest,
    ) -> Result<Option<u128>, Error> {
        let pool = &state.pool;
        let plugin = self.plugins().load(&pool.row.plugin.sha256).await?;
        let view = PoolView {
            free: state.free.clone(),
            family: pool.space.family,
        };
        let context = CallContext {
            config: pool.row.plugin.config.to_string(),
            endpoint: None,
            allocations: Some(Box::new(view)),
        };
        let proposal = self
            .runtime()
            .ipam(&plugin, context)
            .propose(request)
            .await
            .map_err(ipam_error)?;
        let Some(addr) = proposal else {
            return Ok(None);
        };
        let malformed = |reason: String| {
            Error::from(CallError::Malformed {
                plugin: plugin.label(),
                reason,
            })
        };
        if Family::of(addr) != pool.space.family {
            return Err(malformed(format!("proposed {addr}, of the wrong family")));
        }
        let v = super::space::to_u128(addr);
        if !state.free.lock().expect("free space poisoned").is_free(v) {
            return Err(malformed(format!(
                "proposed {addr}, which is not free (the host's allocations import said so)"
            )));
        }
        Ok(Some(v))
    }

    pub(super) async fn ip_network_data(
        &self,
        pool: &IpPool,
        request: &IpamRequest,
        address: IpAddr,
    ) -> Result<Option<serde_json::Value>, Error> {
        if request.host.is_none() {
            return Ok(None);
        }
        let plugin = self.plugins().load(&pool.row.plugin.sha256).await?;
        let context = CallContext {
            config: pool.row.plugin.config.to_string(),
            endpoint: None,
            allocations: None,
        };
        self.runtime()
            .ipam(&plugin, context)
            .preprovisioning_network_data(request, address)
            .await
            .map_err(ipam_error)
    }

    /// Releases one allocation; its address is free again unless it is pre-allocated.
    pub(super) async fn ip_release(
        &self,
        pool_id: &IpPoolId,
        id: &IpClaimId,
    ) -> Result<bool, Error> {
        let entry = self.inner.ipam_locks.get(pool_id);
        let slot = entry.state.lock().await;
        let Some(value) = self.datastore().ip_release(pool_id, id).await? else {
            return Ok(false);
        };
        if let Some(state) = slot.as_ref()
            && state.pool.space.allocatable(value)
            && state.pool.space.pre_allocated_to(value).is_none()
        {
            state.free.lock().expect("free space poisoned").give(value);
        }
        Ok(true)
    }
}

fn address_taken(addr: IpAddr, holder: &str, how: &str) -> Error {
    Error::ConflictField {
        code: ErrorCode::AddressTaken,
        field: "address".into(),
        message: format!("{addr} is {how} `{holder}`"),
    }
}

/// A plugin's `invalid-input` is about the owner it was asked for (a host without a boot NIC).
fn ipam_error(e: CallError) -> Error {
    match e {
        CallError::Plugin {
            plugin,
            error: PluginError::InvalidInput(message),
        } => Error::invalid("owner", format!("plugin {plugin}: {message}")),
        other => Error::from(other),
    }
}
