//! The Redfish face (`/redfish/v1`, `docs/redfish.md`): a tenant's claimed hosts (an admin's
//! every host) as Redfish systems, for the Redfish tools tenants already run, with a Podium token
//! as the credential. Who may see and do what is decided here as for the JSON API: a tenant
//! sees only the hosts of its bound claims (any other is not found), an action is the same
//! durable operation the API would queue and obeys the same state rules. The server only
//! speaks Redfish.

use crate::data::{Host, SessionRow, host_find};
use podium_types::views::{
    OperationView, RedfishAccountView, RedfishRole, SessionView, SystemView,
};
use podium_types::{
    BootMode, BootPersistence, BootSettings, BootTarget, ClaimId, HostFilter, HostId, MediaAction,
    OperationId, OperationRequest, Page, PowerAction, Secret, SessionId, TenantScope,
};

use crate::app::Podium;
use crate::auth::{Caller, caller_of_row, caller_of_token, generate_token, hash_token};
use crate::error::Error;
use crate::lifecycle::{HostAction, action_allowed};

/// How long a session lives without being used (`SessionService.SessionTimeout`).
pub const SESSION_TIMEOUT_SECS: i64 = 1800;

/// How old a system's power reading may be when a Redfish client reads the system before its
/// BMC is asked again (a tool polling the power state sees a change made behind Podium's back
/// within this).
pub const POWER_FRESH_SECS: i64 = tried::RETRY_AFTER.as_secs() as i64;

mod hardware;
pub(crate) mod inventory;
pub(crate) mod tried;

/// How long a read of the system waits for its BMC's answer before it answers what it has.
const POWER_READ_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A session's last use is written at most this often (a request a second must not be a
/// write a second).
const TOUCH_EVERY_SECS: i64 = 60;

/// What a Redfish request carries to say who sends it.
#[derive(Clone, Copy, Debug)]
pub enum RedfishCredential<'a> {
    /// A Podium token: the password of HTTP Basic, or a bearer token.
    Token(&'a str),
    /// A session's token (`X-Auth-Token`).
    Session(&'a str),
}

/// What a PATCH of a system's `Boot` names; what it leaves out keeps its value.
#[derive(Clone, Copy, Debug, Default)]
pub struct BootChange {
    pub target: Option<BootTarget>,
    pub persistence: Option<BootPersistence>,
    pub mode: Option<BootMode>,
}

impl BootChange {
    /// The override asked for, over the `current` one, as BMCs read a PATCH: a target without
    /// `BootSourceOverrideEnabled` keeps the current persistence (`Once` where there is none);
    /// `Disabled` alone clears the target; a device is needed unless the override is disabled.
    fn over(self, current: Option<BootSettings>) -> Result<BootSettings, Error> {
        let current_persistence = current
            .map(|c| c.persistence)
            .filter(|p| *p != BootPersistence::Disabled)
            .unwrap_or(BootPersistence::Once);
        let persistence = match (self.persistence, self.target) {
            (Some(p), _) => p,
            (None, Some(BootTarget::None)) => BootPersistence::Disabled,
            (None, _) => current_persistence,
        };
        let target = match (self.target, persistence) {
            (Some(t), _) => t,
            (None, BootPersistence::Disabled) => BootTarget::None,
            (None, _) => current.map_or(BootTarget::None, |c| c.target),
        };
        if target == BootTarget::None && persistence != BootPersistence::Disabled {
            return Err(Error::invalid(
                "BootSourceOverrideTarget",
                "must be a device when BootSourceOverrideEnabled is Once or Continuous",
            ));
        }
        Ok(BootSettings {
            target,
            persistence,
            mode: self.mode.or(current.and_then(|c| c.mode)),
        })
    }
}

/// The caller of a Redfish request, and the session it came through.
#[derive(Clone, Debug)]
pub struct RedfishCaller {
    pub caller: Caller,
    pub session: Option<SessionId>,
}

fn seconds_ago(seconds: i64) -> podium_types::Timestamp {
    podium_types::Timestamp::now().before(std::time::Duration::from_secs(seconds.unsigned_abs()))
}

fn well_formed(secret: &str) -> bool {
    !secret.is_empty() && secret.len() <= 256 && secret.is_ascii()
}

impl Podium {
    /// The account the caller's token is in the Redfish face's `AccountService`: an admin's
    /// token is an `Administrator`, a tenant's an `Operator` (it acts on what it claimed), a
    /// read-only token of either `ReadOnly`. A caller sees its own account alone.
    pub async fn redfish_account(&self, caller: &Caller) -> Result<RedfishAccountView, Error> {
        let me = self.me(caller).await?;
        let role = match caller {
            Caller::Admin {
                read_only: true, ..
            }
            | Caller::Tenant {
                read_only: true, ..
            } => RedfishRole::ReadOnly,
            Caller::Admin { .. } => RedfishRole::Administrator,
            Caller::Tenant { .. } => RedfishRole::Operator,
        };
        Ok(RedfishAccountView {
            id: me.token_id,
            user_name: match (me.tenant_name, me.tenant) {
                (Some(name), _) => name,
                (None, Some(id)) => id.into_string(),
                (None, None) => "admin".to_owned(),
            },
            role,
        })
    }

    /// Who sends a Redfish request: a token that is known, not revoked and not expired, or a
    /// session opened with one that still is, used within its timeout.
    pub async fn redfish_authenticate(
        &self,
        credential: RedfishCredential<'_>,
    ) -> Result<RedfishCaller, Error> {
        match credential {
            RedfishCredential::Token(token) => {
                if !well_formed(token) {
                    return Err(Error::Unauthenticated("invalid token"));
                }
                Ok(RedfishCaller {
                    caller: caller_of_token(self.datastore(), token).await?,
                    session: None,
                })
            }
            RedfishCredential::Session(secret) => {
                if !well_formed(secret) {
                    return Err(Error::Unauthenticated("invalid session token"));
                }
                let (session, token) = self
                    .datastore()
                    .session_by_hash(&hash_token(secret))
                    .await?
                    .ok_or(Error::Unauthenticated(
                        "no such session: it ended, timed out or never was",
                    ))?;
                let caller = caller_of_row(token)?;
                if session.last_used_at <= seconds_ago(SESSION_TIMEOUT_SECS) {
                    return Err(Error::Unauthenticated("this session timed out"));
                }
                if session.last_used_at <= seconds_ago(TOUCH_EVERY_SECS) {
                    self.datastore()
                        .session_touch(&session.id, podium_types::Timestamp::now())
                        .await?;
                }
                Ok(RedfishCaller {
                    caller,
                    session: Some(session.id),
                })
            }
        }
    }

    /// Opens a session for a caller established by its token; answers the session and, once,
    /// its token. A read-only token opens a read-only session.
    pub async fn redfish_session_create(
        &self,
        caller: &Caller,
        user_name: &str,
    ) -> Result<(SessionView, Secret), Error> {
        if user_name.chars().count() > 256 || user_name.chars().any(char::is_control) {
            return Err(Error::invalid(
                "UserName",
                "must be at most 256 characters, none of them control characters",
            ));
        }
        let token_id = caller.token_id().clone();
        let secret = generate_token();
        let now = podium_types::Timestamp::now();
        let row = SessionRow {
            id: SessionId::generate(),
            token_id,
            user_name: user_name.to_owned(),
            created_at: now,
            last_used_at: now,
        };
        self.datastore()
            .session_create(&row, &hash_token(secret.expose()))
            .await?;
        Ok((session_view(row), secret))
    }

    /// The live sessions the caller may see: a tenant's, its tenant's; an admin's, all.
    pub async fn redfish_session_list(&self, caller: &Caller) -> Result<Vec<SessionView>, Error> {
        let rows = self
            .datastore()
            .session_list(caller.scope(), seconds_ago(SESSION_TIMEOUT_SECS))
            .await?;
        Ok(rows.into_iter().map(session_view).collect())
    }

    pub async fn redfish_session_view(
        &self,
        caller: &Caller,
        id: &SessionId,
    ) -> Result<SessionView, Error> {
        self.datastore()
            .session_get(caller.scope(), id)
            .await?
            .filter(|s| s.last_used_at > seconds_ago(SESSION_TIMEOUT_SECS))
            .map(session_view)
            .ok_or_else(|| Error::not_found("session", id))
    }

    /// Ends a session: the caller's own (a read-only caller may log out), or, with a token that
    /// may write, any the caller may see.
    pub async fn redfish_session_delete(
        &self,
        caller: &RedfishCaller,
        id: &SessionId,
    ) -> Result<(), Error> {
        if caller.session.as_ref() != Some(id) {
            caller.caller.require_writable()?;
        }
        self.datastore()
            .session_get(caller.caller.scope(), id)
            .await?
            .ok_or_else(|| Error::not_found("session", id))?;
        self.datastore().session_delete(id).await?;
        Ok(())
    }

    /// Forgets the sessions past their timeout (the `expiry` task); how many.
    pub(crate) async fn redfish_sessions_expire(&self) -> Result<u64, Error> {
        Ok(self
            .datastore()
            .sessions_expire(seconds_ago(SESSION_TIMEOUT_SECS))
            .await?)
    }

    /// The systems the caller may see: a tenant the hosts of its bound claims, an admin every
    /// host.
    pub async fn redfish_systems(&self, caller: &Caller) -> Result<Vec<SystemView>, Error> {
        match caller.scope() {
            TenantScope::Every => {
                let mut out = Vec::new();
                let mut page = Page {
                    limit: 1000,
                    cursor: None,
                };
                loop {
                    let got = self
                        .datastore()
                        .host_list(&HostFilter::default(), &page)
                        .await?;
                    out.extend(
                        got.items
                            .into_iter()
                            .map(Host::from)
                            .filter(crate::hardware::is_system)
                            .map(|h| system_view(h, None)),
                    );
                    match got.next {
                        Some(next) => page.cursor = Some(next),
                        None => return Ok(out),
                    }
                }
            }
            scope @ TenantScope::Tenant(_) => {
                let mut out = Vec::new();
                for claim in self.datastore().claim_list(scope).await? {
                    if !crate::hardware::holds(claim.state) {
                        continue;
                    }
                    let Some(host_id) = &claim.host_id else {
                        continue;
                    };
                    if let Some(host) = host_find(self.datastore(), host_id).await?
                        && host.claim_id.as_ref() == Some(&claim.id)
                        && crate::hardware::is_system(&host)
                    {
                        out.push(system_view(host, Some(claim.id)));
                    }
                }
                Ok(out)
            }
        }
    }

    pub async fn redfish_system(&self, caller: &Caller, id: &HostId) -> Result<SystemView, Error> {
        let (host, claim) = self.redfish_host(caller, id).await?;
        let host = self.power_fresh(host).await;
        Ok(system_view(host, claim))
    }

    /// The host with its power state as its BMC reports it now, where the last reading is older
    /// than [`POWER_FRESH_SECS`]: one reader (of every process) asks the BMC, and the others, or
    /// a BMC that does not answer in time, answer the last reading.
    async fn power_fresh(&self, host: Host) -> Host {
        let due = seconds_ago(POWER_FRESH_SECS);
        if host.last_seen_at >= due || !self.inner.redfish_power_tried.try_now(&host.id) {
            return host;
        }
        let taken = self
            .datastore()
            .host_refresh_take_one(&host.id, due, podium_types::Timestamp::now())
            .await;
        if !matches!(taken, Ok(true)) {
            return host;
        }
        let read = tokio::time::timeout(POWER_READ_WAIT, self.host_power_refresh(&host)).await;
        match read {
            Ok(Ok(true)) => match host_find(self.datastore(), &host.id).await {
                Ok(Some(fresh)) => fresh,
                _ => host,
            },
            Ok(Err(e)) => {
                tracing::info!(host = %host.id, error = %e, "cannot read the host's power state for a Redfish client");
                host
            }
            _ => host,
        }
    }

    /// `ComputerSystem.Reset`: a power operation.
    pub async fn redfish_reset(
        &self,
        caller: &Caller,
        id: &HostId,
        action: PowerAction,
    ) -> Result<OperationView, Error> {
        self.redfish_operation(
            caller,
            id,
            HostAction::Power,
            OperationRequest::Power(action),
        )
        .await
    }

    /// A PATCH of the system's `Boot`: a boot override operation.
    pub async fn redfish_boot(
        &self,
        caller: &Caller,
        id: &HostId,
        change: BootChange,
    ) -> Result<OperationView, Error> {
        let (host, _) = self.redfish_host(caller, id).await?;
        let boot = change.over(host.boot)?;
        self.redfish_operation(caller, id, HostAction::Boot, OperationRequest::Boot(boot))
            .await
    }

    /// `VirtualMedia.InsertMedia` / `EjectMedia`: a media operation. The image URL is handed to
    /// the BMC, which downloads it.
    pub async fn redfish_media(
        &self,
        caller: &Caller,
        id: &HostId,
        mut media: MediaAction,
    ) -> Result<OperationView, Error> {
        if let MediaAction::Insert(request) = &mut media {
            request.image_url = crate::urls::http_url("Image", &request.image_url)?.into();
        }
        self.redfish_operation(
            caller,
            id,
            HostAction::Media,
            OperationRequest::Media(media),
        )
        .await
    }

    /// An operation as a Redfish task: one the caller may see (a tenant's, one run on its
    /// claimed host at its claim's request).
    pub async fn redfish_task(
        &self,
        caller: &Caller,
        id: &OperationId,
    ) -> Result<OperationView, Error> {
        let op = self
            .datastore()
            .operation_get(id)
            .await?
            .ok_or_else(|| Error::not_found("task", id))?;
        if let TenantScope::Tenant(_) = caller.scope() {
            let visible = match &op.claim_id {
                Some(c) => self
                    .datastore()
                    .claim_get(caller.scope(), c)
                    .await?
                    .is_some(),
                None => false,
            };
            if !visible {
                return Err(Error::not_found("task", id));
            }
        }
        Ok(crate::views::operation(op))
    }

    async fn redfish_operation(
        &self,
        caller: &Caller,
        id: &HostId,
        admin_action: HostAction,
        request: OperationRequest,
    ) -> Result<OperationView, Error> {
        caller.require_writable()?;
        let (host, claim) = self.redfish_host(caller, id).await?;
        let action = if claim.is_some() {
            HostAction::TenantRedfish
        } else {
            admin_action
        };
        action_allowed(&host, action)?;
        let op = self.operation_start(&host, request, claim.as_ref()).await?;
        Ok(crate::views::operation(op))
    }
}

fn session_view(row: SessionRow) -> SessionView {
    SessionView {
        id: row.id,
        user_name: row.user_name,
        created_at: row.created_at,
    }
}

fn system_view(host: Host, claim: Option<ClaimId>) -> SystemView {
    let power_state = host.power_state;
    let state = crate::views::shown_state(&host);
    SystemView {
        id: host.id,
        name: host.name,
        uuid: host.uuid,
        manufacturer: host.manufacturer,
        model: host.model,
        serial: host.serial,
        cpu_count: host.cpu_count,
        memory_mib: host.memory_mib,
        nics: host.nics,
        media_slots: host.media_slots,
        boot: host.boot,
        power_state,
        state,
        claim,
        bios_version: host.bios_version,
        bmc_version: host.bmc_version,
        updated_at: host.updated_at,
    }
}
