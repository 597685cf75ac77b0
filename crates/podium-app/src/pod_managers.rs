//! Pod managers, the application side: the Valence registry with credentials sealed, plugins
//! chosen per site, the status probe and the inventory sync through the site's driver.

use podium_types::{ErrorCode, OperationRequest, PodManagerId, PodManagerStatus};

use crate::app::Podium;
use crate::auth::Caller;
use crate::bindings::{DEFAULT_DRIVER, DEFAULT_IPAM};
use crate::data::{
    OperationRow, PodManager, PodManagerConflict, pod_manager_find, pod_manager_load,
};
use crate::endpoint::{Bmc, Tls, canonical, normalize_url, seal_auth, validate_auth};
use crate::error::Error;
use crate::labels::validate_name;
use crate::tasks::Outcome;
use crate::views;
use podium_runtime::{CallError, World};
use podium_types::Page;
use podium_types::PodManagerFilter;
use podium_types::SyncSummary;
use podium_types::requests::{
    NetworkConfigOwner, OperationLimits, PluginBindingParams, PodManagerCreate, PodManagerUpdate,
};
use podium_types::views::{List, OperationView, PodManagerView, StatusChangeView};

const DESCRIPTION_MAX: usize = 1024;
const LOCATION_MAX: usize = 255;

fn validate_text(field: &str, value: &str, max: usize) -> Result<(), Error> {
    if value.len() > max || value.chars().any(|c| c.is_control() && c != '\n') {
        return Err(Error::invalid(
            field,
            format!("must be at most {max} bytes of printable text"),
        ));
    }
    Ok(())
}

/// The most either limit may be: more operations at once than one process would ever run.
const LIMIT_MAX: u32 = 10_000;

fn validate_limits(limits: &OperationLimits) -> Result<(), Error> {
    for (field, limit) in [
        ("limits.service", limits.service),
        ("limits.site", limits.site),
        ("limits.requests", limits.requests),
    ] {
        if limit.is_some_and(|n| !(1..=LIMIT_MAX).contains(&n)) {
            return Err(Error::invalid(
                field,
                format!("must be between 1 and {LIMIT_MAX} (or null for the default)"),
            ));
        }
    }
    Ok(())
}

fn power_checked(power: podium_types::PowerSettings) -> Result<podium_types::PowerSettings, Error> {
    let max = podium_types::PowerSettings::SHUTDOWN_TIMEOUT_MAX;
    if power.shutdown_timeout > max {
        return Err(Error::invalid(
            "power.shutdown_timeout",
            format!("seconds the OS is given to shut down: 0 (force at once) to {max}"),
        ));
    }
    Ok(power)
}

/// Whether a sync reads the hosts that have their own BMC too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OwnBmcs {
    /// All of them, now (a sync someone asked for).
    Read,
    /// None (the periodic sync: the `refresh` task reads them, spread over the interval).
    Skip,
}

impl Podium {
    /// Queues a sync of a pod manager as an operation.
    pub async fn pod_manager_sync(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
    ) -> Result<OperationView, Error> {
        caller.require_admin()?;
        pod_manager_load(self.datastore(), uuid).await?;
        let op = OperationRow::queued(OperationRequest::Sync, uuid, None);
        self.operation_enqueue(&op).await?;
        Ok(views::operation(op))
    }

    async fn check_unique(
        &self,
        name: &str,
        url: &str,
        except: Option<&PodManagerId>,
    ) -> Result<(), Error> {
        match self
            .datastore()
            .pod_manager_conflict(name, url, except)
            .await?
        {
            None => Ok(()),
            Some(PodManagerConflict::Name) => Err(Error::ConflictField {
                code: ErrorCode::NameTaken,
                field: "name".into(),
                message: format!("a pod manager named `{name}` already exists"),
            }),
            Some(PodManagerConflict::Url) => Err(Error::ConflictField {
                code: ErrorCode::UrlTaken,
                field: "url".into(),
                message: format!("a pod manager for {url} already exists"),
            }),
        }
    }

    pub async fn pod_manager_create(
        &self,
        caller: &Caller,
        params: PodManagerCreate,
    ) -> Result<PodManagerView, Error> {
        caller.require_admin()?;
        validate_name(&params.name)?;
        let url = canonical(&normalize_url("url", &params.url)?);
        let description = params.description.unwrap_or_default();
        let location = params.location.unwrap_or_default();
        validate_text("description", &description, DESCRIPTION_MAX)?;
        validate_text("location", &location, LOCATION_MAX)?;
        if let Some(auth) = &params.auth {
            validate_auth(auth)?;
        }
        let tls = Tls::checked_or_default(params.tls)?;
        let limits = params.limits.unwrap_or_default();
        validate_limits(&limits)?;
        let preprovisioning_image = params
            .preprovisioning_image
            .as_deref()
            .map(|url| crate::urls::http_url("preprovisioning_image", url).map(String::from))
            .transpose()?;
        let driver = params.driver.unwrap_or_else(|| PluginBindingParams {
            name: DEFAULT_DRIVER.into(),
            ..Default::default()
        });
        let driver = self
            .plugins()
            .binding_resolve("driver", &driver, World::HardwareDriver)
            .await?;
        let ipam = params.ipam.unwrap_or_else(|| PluginBindingParams {
            name: DEFAULT_IPAM.into(),
            ..Default::default()
        });
        let ipam = self
            .plugins()
            .binding_resolve("ipam", &ipam, World::Ipam)
            .await?;
        let renderer = match &params.renderer {
            Some(r) => Some(
                self.plugins()
                    .binding_resolve("renderer", r, World::Renderer)
                    .await?,
            ),
            None => None,
        };
        if let Some(t) = &params.tenant_firmware {
            crate::bios::tenant_firmware_check(t)?;
        }
        if let Some(p) = &params.firmware_profile {
            crate::bios::profile_check(p)?;
        }
        self.check_unique(&params.name, &url, None).await?;
        let now = podium_types::Timestamp::now();
        let pm = PodManager {
            uuid: PodManagerId::generate(),
            name: params.name,
            service: Bmc {
                url,
                auth_sealed: params.auth.map(|a| seal_auth(&self.inner.sealer, &a)),
                tls,
            },
            description,
            location,
            driver,
            ipam,
            renderer,
            network_config_owner: params
                .network_config_owner
                .unwrap_or(NetworkConfigOwner::Admin),
            limits,
            preprovisioning_image,
            deploy: params.deploy.unwrap_or_default(),
            power: power_checked(params.power.unwrap_or_default())?,
            tenant_firmware: params.tenant_firmware.unwrap_or_default(),
            firmware_profile: params.firmware_profile.unwrap_or_default(),
            status: PodManagerStatus::Unknown,
            status_message: None,
            last_probe_at: None,
            redfish_link: None,
            created_at: now,
            updated_at: now,
        };
        match self
            .datastore()
            .pod_manager_create(&pm.clone().into())
            .await
        {
            Ok(()) => {}
            Err(e) if crate::data::is_conflict(&e) => {
                // Another request took the name or url meanwhile.
                self.check_unique(&pm.name, &pm.service.url, Some(&pm.uuid))
                    .await?;
                return Err(Error::Conflict {
                    code: ErrorCode::Conflict,
                    message: "a pod manager with this name or url was just created".into(),
                });
            }
            Err(e) => return Err(e.into()),
        }
        self.spawn_refresh(pm.uuid.clone());
        Ok(views::pod_manager(
            pm,
            self.plugins().renderer_default().await?.as_ref(),
        ))
    }

    /// Probes and syncs a pod manager in the background.
    fn spawn_refresh(&self, uuid: PodManagerId) {
        let podium = self.clone();
        tokio::spawn(async move {
            if podium.pod_manager_probe(&uuid).await == Some(true)
                && let Err(e) = podium.pod_manager_sync_now(&uuid, OwnBmcs::Skip).await
            {
                tracing::warn!(pod_manager = %uuid, error = %e, "sync failed");
            }
        });
    }

    pub async fn pod_manager_view(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
    ) -> Result<PodManagerView, Error> {
        caller.require_admin_read()?;
        let row = pod_manager_load(self.datastore(), uuid).await?;
        Ok(views::pod_manager(
            row,
            self.plugins().renderer_default().await?.as_ref(),
        ))
    }

    pub async fn pod_manager_list(
        &self,
        caller: &Caller,
        filter: PodManagerFilter,
        page: Page,
    ) -> Result<List<PodManagerView>, Error> {
        caller.require_admin_read()?;
        let rows = self.datastore().pod_manager_list(&filter, &page).await?;
        let renderer = self.plugins().renderer_default().await?;
        Ok(List::of(rows, |row| {
            views::pod_manager(row.into(), renderer.as_ref())
        }))
    }

    pub async fn pod_manager_update(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
        params: PodManagerUpdate,
    ) -> Result<PodManagerView, Error> {
        caller.require_admin()?;
        if params.uuid.is_some() {
            return Err(Error::invalid("uuid", "a pod manager's uuid cannot change"));
        }
        let current = pod_manager_load(self.datastore(), uuid).await?;
        let mut row = current.clone();
        let mut endpoint_changed = false;
        if let Some(name) = params.name {
            validate_name(&name)?;
            row.name = name;
        }
        if let Some(url) = params.url {
            let url = canonical(&normalize_url("url", &url)?);
            endpoint_changed |= url != row.service.url;
            row.service.url = url;
        }
        if let Some(description) = params.description {
            validate_text("description", &description, DESCRIPTION_MAX)?;
            row.description = description;
        }
        if let Some(location) = params.location {
            validate_text("location", &location, LOCATION_MAX)?;
            row.location = location;
        }
        if let Some(auth) = params.auth {
            if let Some(auth) = &auth {
                validate_auth(auth)?;
            }
            row.service.auth_sealed = auth.map(|a| seal_auth(&self.inner.sealer, &a));
            endpoint_changed = true;
        }
        if let Some(tls) = params.tls {
            row.service.tls = Tls::checked(tls)?;
            endpoint_changed = true;
        }
        if let Some(driver) = params.driver {
            row.driver = self
                .plugins()
                .binding_resolve("driver", &driver, World::HardwareDriver)
                .await?;
            endpoint_changed = true;
        }
        if let Some(ipam) = params.ipam {
            row.ipam = self
                .plugins()
                .binding_resolve("ipam", &ipam, World::Ipam)
                .await?;
        }
        if let Some(renderer) = params.renderer {
            row.renderer = match renderer {
                Some(r) => Some(
                    self.plugins()
                        .binding_resolve("renderer", &r, World::Renderer)
                        .await?,
                ),
                None => None,
            };
        }
        if let Some(owner) = params.network_config_owner {
            row.network_config_owner = owner;
        }
        if let Some(limits) = params.limits {
            validate_limits(&limits)?;
            row.limits = limits;
        }
        if let Some(image) = params.preprovisioning_image {
            row.preprovisioning_image = image
                .as_deref()
                .map(|url| crate::urls::http_url("preprovisioning_image", url).map(String::from))
                .transpose()?;
        }
        if let Some(power) = params.power {
            row.power = power_checked(power)?;
        }
        if let Some(deploy) = params.deploy {
            row.deploy = deploy;
        }
        if let Some(t) = params.tenant_firmware {
            crate::bios::tenant_firmware_check(&t)?;
            row.tenant_firmware = t;
        }
        if let Some(p) = params.firmware_profile {
            crate::bios::profile_check(&p)?;
            row.firmware_profile = p;
        }
        self.check_unique(&row.name, &row.service.url, Some(uuid))
            .await?;
        row.updated_at = podium_types::Timestamp::now();
        if !self.datastore().pod_manager_update(&row.into()).await? {
            return Err(Error::not_found("pod manager", uuid));
        }
        if endpoint_changed {
            self.spawn_refresh(uuid.clone());
        }
        let row = pod_manager_load(self.datastore(), uuid).await?;
        Ok(views::pod_manager(
            row,
            self.plugins().renderer_default().await?.as_ref(),
        ))
    }

    pub async fn pod_manager_delete(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
    ) -> Result<(), Error> {
        caller.require_admin()?;
        match self.datastore().pod_manager_delete(uuid).await? {
            Ok(true) => {
                // Its hosts went with it; so do their (DHCP-less) addresses.
                self.ip_release_gone_hosts().await?;
                Ok(())
            }
            Ok(false) => Err(Error::not_found("pod manager", uuid)),
            Err(claimed) => Err(Error::Conflict {
                code: ErrorCode::PodManagerInUse,
                message: format!(
                    "{claimed} of this pod manager's hosts are claimed by tenants; release those claims before deleting it"
                ),
            }),
        }
    }

    pub async fn pod_manager_status_history(
        &self,
        caller: &Caller,
        uuid: &PodManagerId,
    ) -> Result<List<StatusChangeView>, Error> {
        caller.require_admin_read()?;
        pod_manager_load(self.datastore(), uuid).await?;
        let history = self.datastore().pod_manager_status_history(uuid).await?;
        Ok(List::all(
            history.into_iter().map(views::status_change).collect(),
        ))
    }

    /// Probes a pod manager through its driver and records the result. Returns whether it is
    /// online, or `None` if it no longer exists.
    pub async fn pod_manager_probe(&self, uuid: &PodManagerId) -> Option<bool> {
        let pm = match pod_manager_find(self.datastore(), uuid).await {
            Ok(Some(pm)) => pm,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(pod_manager = %uuid, error = %e, "probe: cannot read the pod manager");
                return None;
            }
        };
        let outcome = match self.drivers().pod_manager(&pm).await {
            Ok(driver) => driver
                .call()
                .probe()
                .await
                .map_err(|e| describe_failure(&e)),
            Err(e) => Err(e.to_string()),
        };
        let now = podium_types::Timestamp::now();
        let (status, message, link) = match &outcome {
            Ok(info) => {
                let link = if info.root_link.starts_with('/') {
                    format!("{}{}", pm.service.url, info.root_link)
                } else {
                    info.root_link.clone()
                };
                (PodManagerStatus::Online, None, Some(link))
            }
            Err(message) => (PodManagerStatus::Offline, Some(message.as_str()), None),
        };
        if status != pm.status {
            tracing::info!(pod_manager = %pm.name, %status, message, "pod manager status changed");
        }
        if let Err(e) = self
            .datastore()
            .pod_manager_set_status(uuid, status, message, link.as_deref(), now)
            .await
        {
            tracing::warn!(pod_manager = %uuid, error = %e, "probe: cannot record the status");
        }
        Some(outcome.is_ok())
    }

    /// Discovers a pod manager's systems and makes its hosts match; with `OwnBmcs::Read`, reads
    /// every host that has its own BMC too.
    pub(crate) async fn pod_manager_sync_now(
        &self,
        uuid: &PodManagerId,
        own_bmcs: OwnBmcs,
    ) -> Result<SyncSummary, Error> {
        let pm = pod_manager_load(self.datastore(), uuid).await?;
        let driver = self.drivers().pod_manager(&pm).await?;
        // The whole sync under the compose lock: a node composed or decomposed while the
        // systems are read would be marked missing, or added again, by what was read before.
        let composing = self.compose_lock(uuid).await;
        let discovered_at = podium_types::Timestamp::now();
        let systems = driver.call().discover().await.map_err(Error::from)?;
        // Systems only: a chassis is a component of the tree (`chassis_sync`), never a host,
        // whatever a driver reports (contract 0.1.0 let it report chassis as systems).
        let hosts: Vec<_> = systems
            .iter()
            .filter(|s| s.kind == podium_runtime::SystemKind::System)
            .map(crate::data::host_from_system)
            .collect();
        let summary = self
            .lifecycle()
            .discovered(uuid, &hosts, discovered_at)
            .await?;
        self.chassis_sync(&pm.name, uuid, &driver).await;
        self.composition_sync(&pm, &driver).await;
        drop(composing);
        if own_bmcs == OwnBmcs::Read {
            self.hosts_with_bmc_refresh(&pm).await?;
        }
        tracing::info!(pod_manager = %pm.name, seen = summary.seen, added = summary.added, missing = summary.missing, "synced");
        Ok(summary)
    }

    /// The `probe` task: every pod manager probed, a few at a time, its status and history
    /// recorded.
    pub(crate) async fn pod_managers_probe_all(&self) -> Result<Outcome, Error> {
        let probed = self
            .for_each_pod_manager(|podium, uuid| async move {
                podium.pod_manager_probe(&uuid).await;
                true
            })
            .await?
            .len();
        Ok(Outcome::new(format!("{probed} pod managers probed")).count("probed", probed))
    }

    /// The `sync` task: the inventory of every pod manager that answers its probe synced, a
    /// few at a time; a failed one's status and history say why.
    pub(crate) async fn pod_managers_sync_all(&self) -> Result<Outcome, Error> {
        let outcomes = self
            .for_each_pod_manager(|podium, uuid| async move {
                if podium.pod_manager_probe(&uuid).await != Some(true) {
                    return None;
                }
                // Hosts with their own BMC are read by the `refresh` task, spread over the
                // interval, not all at once here.
                match podium.pod_manager_sync_now(&uuid, OwnBmcs::Skip).await {
                    Ok(_) => Some(true),
                    Err(e) => {
                        tracing::warn!(pod_manager = %uuid, error = %e, "periodic sync failed");
                        Some(false)
                    }
                }
            })
            .await?;
        let synced = outcomes.iter().filter(|o| **o == Some(true)).count();
        let failed = outcomes.iter().filter(|o| **o == Some(false)).count();
        Ok(Outcome::new(format!("{synced} pod managers synced"))
            .count("synced", synced)
            .count("failed", failed))
    }

    async fn for_each_pod_manager<F, Fut, T>(&self, f: F) -> Result<Vec<T>, Error>
    where
        F: Fn(Podium, PodManagerId) -> Fut,
        Fut: Future<Output = T>,
    {
        use futures::StreamExt;
        let uuids = self.datastore().pod_manager_uuids().await?;
        Ok(futures::stream::iter(uuids)
            .map(|uuid| f(self.clone(), uuid))
            .buffer_unordered(8)
            .collect::<Vec<T>>()
            .await)
    }
}

/// Why a pod manager is offline, in words an admin can act on.
fn describe_failure(e: &CallError) -> String {
    use podium_runtime::PluginError as P;
    match e {
        CallError::Plugin { error, .. } => match error {
            P::Unauthorized(m) => {
                format!("wrong credentials: the endpoint answered unauthorized ({m})")
            }
            P::Unreachable(m) if m.contains("TLS") || m.contains("certificate") => {
                format!("TLS failure: {m}")
            }
            P::Unreachable(m) => format!("unreachable: {m}"),
            P::Timeout(m) => format!("timed out: {m}"),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}
