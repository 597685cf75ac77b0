//! Hosts and their actions, the application side: listing and labelling the machines behind pod
//! managers, and carrying out power, boot and media actions as operations through the site's
//! driver.

use podium_types::ErrorCode;
use podium_types::{ClaimId, HostId, PodManagerId};

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::{
    Host, OperationRow, PodManager, host_from_system, host_load, pod_manager_find, pod_manager_load,
};
use crate::endpoint::{Bmc, Tls, canonical, seal_auth};
use crate::error::Error;
use crate::labels::validate_labels;
use crate::lifecycle::{HostAction, action_allowed};
use crate::tasks::Outcome;
use crate::views;
use podium_runtime::{CallError, PluginError, System, SystemKind};
use podium_types::HostFilter;
use podium_types::Page;
use podium_types::requests::{BootParams, HostCreate, MediaParams, PowerParams};
use podium_types::views::{HostView, List, OperationView};
use podium_types::{OperationRequest, PowerAction};

/// Hosts with their own BMC read at once by one run of the periodic refresh (each at its own
/// endpoint). A run takes only its share of the fleet (`hosts_refresh_due`), so this bounds a
/// burst, not the pace.
const REFRESH_AT_ONCE: usize = 64;

/// How many times a host read of a sync someone asked for waits for a plugin instance (each
/// wait up to the runtime's bound, a minute) before the host is left unread.
const BUSY_TRIES: u32 = 5;

/// What a read of hosts' own BMCs asks each.
#[derive(Clone, Copy)]
enum Reading {
    /// The whole inventory (`discover`: the system, its NICs, its media slots).
    Inventory,
    /// The power state alone (one request).
    Power,
}

/// What reading a host's own BMC found.
enum Read {
    /// The BMC reported the host.
    Seen(HostId),
    /// The BMC answered without the host's system (the host is marked `missing`).
    Missing,
    /// The BMC did not answer (logged).
    Unreachable,
}

/// Root device hints (a claim's, or a host's default) as the deploy agent can match them:
/// `field` names them in an error.
pub(crate) fn validate_root_device(
    field: &str,
    hints: &podium_types::requests::RootDeviceHints,
) -> Result<(), Error> {
    if hints.size == Some(0) {
        return Err(Error::invalid(
            format!("{field}.size"),
            "a disk's size in GiB, at least 1",
        ));
    }
    for (name, value) in [
        ("serial", &hints.serial),
        ("wwn", &hints.wwn),
        ("name", &hints.name),
        ("model", &hints.model),
        ("vendor", &hints.vendor),
    ] {
        if let Some(value) = value
            && (value.is_empty() || value.len() > 255 || value.chars().any(char::is_control))
        {
            return Err(Error::invalid(
                format!("{field}.{name}"),
                "1 to 255 characters, none of them a control character",
            ));
        }
    }
    Ok(())
}

/// The most characters of a maintenance reason.
const REASON_MAX: usize = 255;

impl Podium {
    /// Registers a host that has its own BMC under a pod manager acting as a site: the system is
    /// discovered through the pod manager's driver at that BMC, and every later call for this
    /// host reaches exactly that BMC. It is `registering`, with `register` queued
    /// (`lifecycle.rs`).
    pub async fn host_create(
        &self,
        caller: &Caller,
        params: HostCreate,
    ) -> Result<HostView, Error> {
        caller.require_admin()?;
        let pm = pod_manager_find(self.datastore(), &params.pod_manager)
            .await?
            .ok_or_else(|| {
                Error::invalid(
                    "pod_manager",
                    format!("no pod manager `{}`", params.pod_manager),
                )
            })?;
        let bmc = params.bmc;
        let url = canonical(&crate::endpoint::normalize_url("bmc.url", &bmc.url)?);
        if let Some(auth) = &bmc.auth {
            crate::endpoint::validate_auth(auth).map_err(prefix_field("bmc"))?;
        }
        let tls = Tls::checked_or_default(bmc.tls).map_err(prefix_field("bmc"))?;
        let labels = params.labels.unwrap_or_default();
        validate_labels("labels", &labels)?;
        let own = Bmc {
            url,
            auth_sealed: bmc.auth.as_ref().map(|a| seal_auth(&self.inner.sealer, a)),
            tls,
        };
        let systems = self
            .drivers()
            .bmc(&pm, &own)
            .await?
            .call()
            .discover()
            .await
            .map_err(|e| match e {
                // The caller's credentials (or their absence) are at fault, not the BMC.
                CallError::Plugin {
                    error: PluginError::Unauthorized(m),
                    ..
                } => Error::invalid(
                    "bmc.auth",
                    if bmc.auth.is_some() {
                        format!("the BMC refused these credentials: {m}")
                    } else {
                        format!("the BMC requires credentials and none were given: {m}")
                    },
                ),
                e => Error::from(e),
            })?;
        let system = pick_system(&systems, bmc.system_id.as_deref())?;
        // A MAC names one NIC: a second BMC reporting it is a wrong BMC URL or a broken BMC.
        for nic in &system.nics {
            if let Some((other, name)) = self
                .datastore()
                .host_with_mac(&nic.mac, &pm.uuid, &system.id)
                .await?
            {
                return Err(Error::ConflictField {
                    code: ErrorCode::MacInUse,
                    field: "bmc.url".into(),
                    message: format!(
                        "the BMC reports NIC `{}` with MAC {}, which host `{other}` ({name}) already has",
                        nic.id, nic.mac
                    ),
                });
            }
        }
        let mut host = Host::from(host_from_system(system));
        let now = podium_types::Timestamp::now();
        host.pod_manager = pm.uuid.clone();
        host.bmc = Some(own);
        host.state = podium_types::HostState::Registering;
        host.created_at = now;
        host.updated_at = now;
        host.last_seen_at = now;
        if !self.lifecycle().added(&host.clone().into()).await? {
            return Err(Error::ConflictField {
                code: ErrorCode::HostExists,
                field: "bmc.system_id".into(),
                message: format!(
                    "pod manager `{}` already has a host for system `{}`",
                    pm.name, host.system_id
                ),
            });
        }
        if !labels.is_empty() {
            self.datastore()
                .host_set_labels(&host.id, &labels, now)
                .await?;
        }
        self.host_view(caller, &host.id).await
    }

    /// Refreshes the inventory of the hosts of a pod manager that have their own BMC, as many
    /// at once as there may be driver calls in flight (a sync someone asked for: each BMC is its
    /// own endpoint, one exchange at a time with each), skipping those with an operation queued
    /// or running. Writes only what changed.
    pub(crate) async fn hosts_with_bmc_refresh(&self, pm: &PodManager) -> Result<(), Error> {
        let hosts = self.datastore().hosts_with_bmc_idle(&pm.uuid).await?;
        let at_once = self.runtime().config().max_calls as usize;
        let pm = std::sync::Arc::new(pm.clone());
        let hosts = hosts
            .into_iter()
            .map(|h| (pm.clone(), Host::from(h)))
            .collect();
        self.hosts_read(hosts, Reading::Inventory, at_once)
            .await
            .map(|_| ())
    }

    /// One run of the periodic refresh (the `refresh` task): the power state of the share of
    /// the hosts with their own BMC that keeps every one read about once per `interval` when a
    /// run comes every `every`, oldest turn first, so the reads spread evenly over the interval.
    /// What it read and how many BMCs did not answer.
    pub(crate) async fn hosts_refresh_due(
        &self,
        interval: std::time::Duration,
        every: std::time::Duration,
    ) -> Result<Outcome, Error> {
        let read = |taken: usize, unreachable: usize| {
            // The log says which hosts' BMCs did not answer; they come again at their turn.
            Outcome::new(format!(
                "{taken} hosts with their own BMC read, {unreachable} did not answer"
            ))
            .count("read", taken)
            .count("unreachable", unreachable)
        };
        let total = self.datastore().hosts_with_bmc_count().await?;
        if total == 0 {
            return Ok(read(0, 0));
        }
        // A run comes `every` after the last one ended: the time between two starts is that and
        // the time the last one took.
        let took = self
            .inner
            .refresh_took_ms
            .load(std::sync::atomic::Ordering::Relaxed);
        let cycle = every.as_millis() + u128::from(took);
        // Half as many again as the even share: only hosts whose turn came are taken, so the
        // slack drains a backlog (hosts skipped while an operation ran, a slow run) instead of
        // leaving them late for ever.
        let share = (u128::from(total) * cycle * 3).div_ceil(interval.as_millis().max(1) * 2);
        let share = u64::try_from(share).unwrap_or(u64::MAX).clamp(1, total);
        let now = podium_types::Timestamp::now();
        // A little early, so a run that comes a moment before the host's turn still takes it.
        let due_before = now.before(interval.saturating_sub(every / 2));
        let hosts = self
            .datastore()
            .hosts_refresh_take(due_before, share, now)
            .await?;
        let taken = hosts.len();
        let mut pms = std::collections::HashMap::new();
        let mut with_pm = Vec::with_capacity(taken);
        for host in hosts {
            let pm = match pms.get(&host.pod_manager) {
                Some(pm) => std::sync::Arc::clone(pm),
                None => {
                    let pm = std::sync::Arc::new(
                        pod_manager_load(self.datastore(), &host.pod_manager).await?,
                    );
                    pms.insert(host.pod_manager.clone(), pm.clone());
                    pm
                }
            };
            with_pm.push((pm, Host::from(host)));
        }
        let reading = std::time::Instant::now();
        let answered = self
            .hosts_read(with_pm, Reading::Power, REFRESH_AT_ONCE)
            .await?;
        let took = u64::try_from(reading.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.inner
            .refresh_took_ms
            .store(took, std::sync::atomic::Ordering::Relaxed);
        Ok(read(taken, taken - answered))
    }

    /// Reads one host's power state at its BMC now and writes it if it changed; whether the BMC
    /// answered.
    pub(crate) async fn host_power_refresh(&self, host: &Host) -> Result<bool, Error> {
        let pm = std::sync::Arc::new(pod_manager_load(self.datastore(), &host.pod_manager).await?);
        let answered = self
            .hosts_read(vec![(pm, host.clone())], Reading::Power, 1)
            .await?;
        Ok(answered > 0)
    }

    /// Reads the BMC of each host, `at_once` at a time, and writes what changed; one statement
    /// records all that answered. How many answered.
    async fn hosts_read(
        &self,
        hosts: Vec<(std::sync::Arc<PodManager>, Host)>,
        reading: Reading,
        at_once: usize,
    ) -> Result<usize, Error> {
        use futures::StreamExt;
        let read: Vec<Result<Read, Error>> = futures::stream::iter(hosts)
            .map(|(pm, host)| async move {
                match reading {
                    Reading::Inventory => self.host_inventory_read(&pm, &host).await,
                    Reading::Power => self.host_read_power(&pm, &host).await,
                }
            })
            .buffer_unordered(at_once.max(1))
            .collect()
            .await;
        let read = read.into_iter().collect::<Result<Vec<_>, _>>()?;
        let seen: Vec<HostId> = read
            .iter()
            .filter_map(|r| match r {
                Read::Seen(id) => Some(id.clone()),
                Read::Missing | Read::Unreachable => None,
            })
            .collect();
        self.datastore()
            .hosts_seen(&seen, podium_types::Timestamp::now())
            .await?;
        Ok(read
            .iter()
            .filter(|r| !matches!(r, Read::Unreachable))
            .count())
    }

    /// Reads the power state of one host at its own BMC (one request) and writes it if it
    /// changed; a BMC that no longer has the system marks the host `missing`.
    async fn host_read_power(&self, pm: &PodManager, host: &Host) -> Result<Read, Error> {
        let read_from = podium_types::Timestamp::now();
        match self
            .drivers()
            .host(pm, host)
            .await?
            .call()
            .get_power(&host.system_id)
            .await
        {
            Ok(power) => {
                self.lifecycle()
                    .power_read(&host.id, power, read_from)
                    .await?;
                Ok(Read::Seen(host.id.clone()))
            }
            Err(CallError::Plugin {
                error: PluginError::NotFound(_),
                ..
            }) => {
                self.lifecycle()
                    .gone(&host.id, podium_types::Timestamp::now())
                    .await?;
                Ok(Read::Missing)
            }
            // This process is busy, not the BMC: the host comes again at its next turn.
            Err(e @ CallError::Busy { .. }) => {
                tracing::debug!(host = %host.id, error = %e, "power read skipped");
                Ok(Read::Unreachable)
            }
            Err(e) => {
                tracing::warn!(host = %host.id, error = %e, "cannot reach the host's own BMC");
                Ok(Read::Unreachable)
            }
        }
    }

    /// Reads one host's inventory at its own BMC and writes what changed.
    async fn host_inventory_read(&self, pm: &PodManager, host: &Host) -> Result<Read, Error> {
        let now = podium_types::Timestamp::now();
        // A sync someone asked for reads every host: where every plugin instance stayed busy (a
        // fleet larger than the instances, several syncs at once), the read waits its turn
        // again rather than leave the host unread.
        let mut tries = 0;
        let read = loop {
            tries += 1;
            match self.drivers().host(pm, host).await?.call().discover().await {
                Err(CallError::Busy { .. }) if tries < BUSY_TRIES => continue,
                read => break read,
            }
        };
        match read {
            Ok(systems) => match systems.iter().find(|s| s.id == host.system_id) {
                Some(system) => {
                    self.lifecycle()
                        .refreshed(&host.id, &host_from_system(system), now)
                        .await?;
                    Ok(Read::Seen(host.id.clone()))
                }
                None => {
                    self.lifecycle().gone(&host.id, now).await?;
                    Ok(Read::Missing)
                }
            },
            Err(e) => {
                tracing::warn!(host = %host.id, error = %e, "cannot reach the host's own BMC");
                Ok(Read::Unreachable)
            }
        }
    }

    /// A host, for an admin.
    pub(crate) async fn host_get(&self, caller: &Caller, id: &HostId) -> Result<Host, Error> {
        caller.require_admin_read()?;
        host_load(self.datastore(), id).await
    }

    pub async fn host_view(&self, caller: &Caller, id: &HostId) -> Result<HostView, Error> {
        let host = self.host_get(caller, id).await?;
        let cleaning = self.cleaning_in_effect(&host.pod_manager).await?;
        Ok(views::host(host, cleaning))
    }

    /// `POST /v1/hosts/{id}/inspect`: inspects a host again (registers it again first if its
    /// registration failed), as an operation.
    pub async fn host_inspect(&self, caller: &Caller, id: &HostId) -> Result<OperationView, Error> {
        caller.require_admin()?;
        let host = self.host_get(caller, id).await?;
        action_allowed(&host, HostAction::Inspect)?;
        let Some(op) = self.lifecycle().inspect_again(&host).await? else {
            return Err(Error::Conflict {
                code: ErrorCode::HostBusy,
                message: format!("host `{id}` changed state meanwhile; read it and try again"),
            });
        };
        Ok(crate::views::operation(op))
    }

    /// `PUT /v1/hosts/{id}/maintenance`: puts the host in maintenance (or changes the reason).
    pub async fn host_maintenance_set(
        &self,
        caller: &Caller,
        id: &HostId,
        reason: Option<String>,
    ) -> Result<HostView, Error> {
        caller.require_admin()?;
        let reason = reason.unwrap_or_default();
        if reason.chars().count() > REASON_MAX || reason.chars().any(char::is_control) {
            return Err(Error::invalid(
                "reason",
                format!("at most {REASON_MAX} printable characters"),
            ));
        }
        let now = podium_types::Timestamp::now();
        if !self
            .datastore()
            .host_set_maintenance(id, Some(&reason), now)
            .await?
        {
            return Err(Error::not_found("host", id));
        }
        tracing::info!(host = %id, reason, "maintenance begins");
        self.host_view(caller, id).await
    }

    /// `DELETE /v1/hosts/{id}/maintenance`: ends it; what waited runs, pending claims are tried.
    pub async fn host_maintenance_end(
        &self,
        caller: &Caller,
        id: &HostId,
    ) -> Result<HostView, Error> {
        caller.require_admin()?;
        let now = podium_types::Timestamp::now();
        if !self.datastore().host_set_maintenance(id, None, now).await? {
            return Err(Error::not_found("host", id));
        }
        tracing::info!(host = %id, "maintenance ends");
        self.operations_wake();
        self.inner.background.run_now(crate::tasks::Job::Bind);
        self.host_view(caller, id).await
    }

    /// What a release of a host of `pod_manager` erases now, and why.
    async fn cleaning_in_effect(
        &self,
        pod_manager: &PodManagerId,
    ) -> Result<podium_types::CleaningInEffect, Error> {
        Ok(
            match pod_manager_find(self.datastore(), pod_manager).await? {
                Some(pm) => podium_types::CleaningInEffect::of(
                    &pm.deploy,
                    pm.preprovisioning_image.is_some(),
                ),
                // Deleted meanwhile, its hosts with it.
                None => podium_types::CleaningInEffect {
                    erases: None,
                    why: "the host's pod manager is being deleted".into(),
                },
            },
        )
    }

    pub async fn host_list(
        &self,
        caller: &Caller,
        filter: HostFilter,
        page: Page,
    ) -> Result<List<HostView>, Error> {
        caller.require_admin_read()?;
        let paged = self.datastore().host_list(&filter, &page).await?;
        // A page's hosts are of a few pod managers: each read once.
        let mut cleaning = std::collections::HashMap::new();
        for row in &paged.items {
            if !cleaning.contains_key(&row.pod_manager) {
                let of = self.cleaning_in_effect(&row.pod_manager).await?;
                cleaning.insert(row.pod_manager.clone(), of);
            }
        }
        Ok(List::of(paged, |h| {
            let of = cleaning[&h.pod_manager].clone();
            views::host(h.into(), of)
        }))
    }

    /// Replaces a host's labels and/or sets the NIC it boots from (checked against its NICs).
    pub async fn host_update(
        &self,
        caller: &Caller,
        id: &HostId,
        params: podium_types::requests::HostUpdate,
    ) -> Result<HostView, Error> {
        caller.require_admin()?;
        let host = self.host_get(caller, id).await?;
        if let Some(labels) = &params.labels {
            validate_labels("labels", labels)?;
        }
        if let Some(bmc) = &params.bmc {
            if host.bmc.is_none() {
                return Err(Error::invalid(
                    "bmc",
                    "this host is reached through its pod manager's endpoint: change the pod \
                     manager's credentials instead",
                ));
            }
            crate::endpoint::validate_auth(&bmc.auth).map_err(prefix_field("bmc"))?;
            // New credentials: the host registers again, from a state that allows it.
            action_allowed(&host, HostAction::Inspect)?;
        }
        if let Some(Some(hints)) = &params.root_device {
            validate_root_device("root_device", hints)?;
        }
        let boot_mac = match &params.boot_mac {
            Some(Some(mac)) => {
                let nics = &host.nics;
                let wanted = mac.trim().to_ascii_lowercase();
                let Some(nic) = nics.iter().find(|n| n.mac.eq_ignore_ascii_case(&wanted)) else {
                    let known: Vec<&str> = nics.iter().map(|n| n.mac.as_str()).collect();
                    return Err(Error::invalid(
                        "boot_mac",
                        format!(
                            "{mac} is not the MAC of one of this host's NICs ({})",
                            if known.is_empty() {
                                "it has none".to_owned()
                            } else {
                                known.join(", ")
                            }
                        ),
                    ));
                };
                Some(Some(nic.mac.to_ascii_lowercase()))
            }
            Some(None) => Some(None),
            None => None,
        };
        // First what can be refused (the host changed state meanwhile), then the rest.
        if let Some(bmc) = &params.bmc {
            if !self
                .lifecycle()
                .credentials_changed(&host, &seal_auth(&self.inner.sealer, &bmc.auth))
                .await?
            {
                return Err(Error::Conflict {
                    code: ErrorCode::HostBusy,
                    message: format!("host `{id}` changed state meanwhile; read it and try again"),
                });
            }
            tracing::info!(host = %id, "new BMC credentials: registering again");
        }
        let now = podium_types::Timestamp::now();
        if let Some(labels) = &params.labels
            && !self.datastore().host_set_labels(id, labels, now).await?
        {
            return Err(Error::not_found("host", id));
        }
        if let Some(boot_mac) = boot_mac
            && !self
                .datastore()
                .host_set_boot_mac(id, boot_mac.as_deref(), now)
                .await?
        {
            return Err(Error::not_found("host", id));
        }
        if let Some(hints) = &params.root_device
            && !self
                .datastore()
                .host_set_root_device(id, hints.as_ref(), now)
                .await?
        {
            return Err(Error::not_found("host", id));
        }
        self.host_view(caller, id).await
    }

    pub async fn host_power(
        &self,
        caller: &Caller,
        id: &HostId,
        params: PowerParams,
    ) -> Result<OperationView, Error> {
        let request = OperationRequest::Power(params.action);
        self.operation_queue(caller, id, HostAction::Power, request)
            .await
            .map(views::operation)
    }

    pub async fn host_boot(
        &self,
        caller: &Caller,
        id: &HostId,
        params: BootParams,
    ) -> Result<OperationView, Error> {
        let request = OperationRequest::Boot(params.into());
        self.operation_queue(caller, id, HostAction::Boot, request)
            .await
            .map(views::operation)
    }

    pub async fn host_media(
        &self,
        caller: &Caller,
        id: &HostId,
        mut params: MediaParams,
    ) -> Result<OperationView, Error> {
        if let MediaParams::Insert { image_url, .. } = &mut params {
            *image_url = crate::urls::http_url("image_url", image_url)?.into();
        }
        let request = OperationRequest::Media(params.into());
        self.operation_queue(caller, id, HostAction::Media, request)
            .await
            .map(views::operation)
    }

    async fn operation_queue(
        &self,
        caller: &Caller,
        host_id: &HostId,
        action: HostAction,
        request: OperationRequest,
    ) -> Result<OperationRow, Error> {
        caller.require_admin()?;
        let host = host_load(self.datastore(), host_id).await?;
        action_allowed(&host, action)?;
        self.operation_start(&host, request, None).await
    }

    /// Queues a power action on a host the caller was already checked for (a tenant's claimed
    /// host, at `claim`'s request): the same operation an admin's power action is.
    pub(crate) async fn host_power_queue(
        &self,
        host: Host,
        action: PowerAction,
        claim: Option<&ClaimId>,
    ) -> Result<OperationRow, Error> {
        self.operation_start(&host, OperationRequest::Power(action), claim)
            .await
    }

    pub(crate) async fn operation_start(
        &self,
        host: &Host,
        request: OperationRequest,
        claim: Option<&ClaimId>,
    ) -> Result<OperationRow, Error> {
        let mut op = OperationRow::queued(request, &host.pod_manager, Some(&host.id));
        op.claim_id = claim.cloned();
        self.operation_enqueue(&op).await?;
        Ok(op)
    }

    /// Reads back what a host's BMC reports after an action (power state, boot override, media
    /// slots) and records it, so the host shows the machine's state, not the last sync's.
    /// Answers the power state seen for the operation's result; a BMC that does not answer
    /// leaves the host as it was (the action itself succeeded).
    pub(crate) async fn host_observe(
        &self,
        pm: &PodManager,
        host: &Host,
    ) -> Option<podium_types::Observed> {
        let system = match self
            .drivers()
            .host(pm, host)
            .await
            .ok()?
            .call()
            .inspect(&host.system_id)
            .await
        {
            Ok(system) => system,
            Err(e) => {
                tracing::info!(host = %host.id, error = %e, "cannot read back the host's state after an action");
                return None;
            }
        };
        let observed = host_from_system(&system);
        if let Err(e) = self
            .datastore()
            .host_set_observed(&host.id, &observed, podium_types::Timestamp::now())
            .await
        {
            tracing::warn!(host = %host.id, error = %e, "cannot record the host's state after an action");
        }
        Some(podium_types::Observed {
            power_state: Some(observed.power_state),
        })
    }
}

/// The system a host-with-its-own-BMC stands for: the one named, or the only one.
fn pick_system<'a>(systems: &'a [System], wanted: Option<&str>) -> Result<&'a System, Error> {
    let machines: Vec<&System> = systems
        .iter()
        .filter(|s| s.kind == SystemKind::System)
        .collect();
    match wanted {
        Some(w) => machines
            .iter()
            .find(|s| {
                s.id == w
                    || s.id.trim_end_matches('/').rsplit('/').next() == Some(w)
                    || s.uuid.as_deref() == Some(w)
            })
            .copied()
            .ok_or_else(|| {
                Error::invalid(
                    "bmc.system_id",
                    format!(
                        "the BMC reports no system `{w}`; it reports {}",
                        machines
                            .iter()
                            .map(|s| format!("`{}`", s.id))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            }),
        None => match machines.as_slice() {
            [one] => Ok(one),
            [] => Err(Error::invalid("bmc.url", "the BMC reports no system")),
            many => Err(Error::invalid(
                "bmc.system_id",
                format!(
                    "the BMC reports {} systems; name one of {}",
                    many.len(),
                    many.iter()
                        .map(|s| format!("`{}`", s.id))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        },
    }
}

/// Puts `prefix.` in front of the field an error names.
fn prefix_field(prefix: &'static str) -> impl Fn(Error) -> Error {
    move |e| match e {
        Error::Invalid {
            field: Some(f),
            message,
        } => Error::Invalid {
            field: Some(format!("{prefix}.{f}")),
            message,
        },
        other => other,
    }
}
