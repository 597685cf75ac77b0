//! The deploy agent: OpenStack's Ironic Python Agent (IPA), unmodified, in the ramdisk a host
//! boots from virtual media. Podium answers it as Ironic does (`docs/deploy.md`):
//!
//! - `GET /` tells the agent which API version it talks to ([`API_VERSION`]: the agent sends its
//!   token with every heartbeat, and serves its own API over TLS with a certificate it makes
//!   itself and sends along);
//! - `GET /v1/lookup?addresses=MACs`: which host the agent runs on, answered only for a host
//!   Podium booted the ramdisk on and has not booted anything else on since (an `agents` row),
//!   with the token, issued once;
//! - `POST /v1/heartbeat/{host}`: the agent is alive, at this URL, with this certificate.
//!   Podium accepts it only with the token, only at the address it gave the host's ramdisk,
//!   and only once it has reached the agent there itself, over TLS with exactly that
//!   certificate ([`client`]).
//!
//! Lookups and heartbeats are bounded per host ([`Windows`]). Nothing answered reveals more
//! than the host's id, and only to the agent Podium expects on it.

pub(crate) mod client;
pub(crate) mod windows;

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::app::Podium;
use crate::auth::Caller;
use crate::data::{AgentRow, Heartbeat, LOOKUP_MACS_MAX, host_find, host_load, pod_manager_load};
use crate::error::Error;
use podium_types::{ErrorCode, HostId, Secret, Timestamp};

/// Where agents find Podium, under the base URL BMCs download from (the agent's `api_url`).
pub const API_PATH: &str = "/agent";
/// The Ironic API version Podium answers agents with: from 1.62 an agent sends its token with
/// every heartbeat, from 1.68 it serves its API over TLS with a certificate of its own, which
/// it sends with every heartbeat (IPA's "auto-TLS").
pub const API_VERSION: &str = "1.68";
/// How often an agent heartbeats: every 30 % to 60 % of this (IPA's rule).
const HEARTBEAT_TIMEOUT_SECONDS: u64 = 300;
/// A token IPA accepts has at least 32 characters.
const TOKEN_BYTES: usize = 32;

/// A heartbeat, as IPA sends it (`POST /v1/heartbeat/{host}`).
#[derive(Debug, Deserialize)]
pub struct HeartbeatRequest {
    /// Where the agent serves its API (`https://ADDRESS:9999` with auto-TLS).
    pub callback_url: String,
    pub agent_token: Option<Secret>,
    pub agent_version: Option<String>,
    /// The certificate (PEM) the agent serves its API with.
    pub agent_verify_ca: Option<String>,
}

/// What an admin sees of a host's agent (`GET /v1/hosts/{id}/agent`).
pub use podium_types::views::AgentView;

impl Podium {
    /// The API root an agent reads its API version from (`GET /`), in Ironic's shape.
    pub fn agent_api_root(&self) -> Value {
        let version = json!({
            "id": "v1",
            "status": "CURRENT",
            "min_version": "1.1",
            "version": API_VERSION,
            "links": [],
        });
        json!({
            "name": "Podium",
            "description": "Podium's deploy agent API: the part of Ironic's API the Ironic Python \
                            Agent calls",
            "default_version": version,
            "versions": [version],
        })
    }

    /// An agent asks which host it runs on (`GET /v1/lookup?addresses=MAC,MAC`): the host
    /// expecting an agent with one of those MACs, and the agent's token the first time.
    pub async fn agent_lookup(&self, addresses: Option<&str>) -> Result<Value, Error> {
        let macs = lookup_macs(addresses)?;
        let agents = self.datastore().agents_by_macs(&macs).await?;
        let agent = match agents.as_slice() {
            [agent] => agent,
            [] => {
                return Err(Error::NotFound {
                    kind: "expected agent",
                    id: "for these addresses".into(),
                });
            }
            _ => {
                return Err(Error::Conflict {
                    code: ErrorCode::AgentAmbiguous,
                    message: "these MACs belong to more than one host expecting an agent".into(),
                });
            }
        };
        self.inner.agent_windows.count(&agent.host_id, "lookup")?;
        // md5 checksums as the host's pod manager allows them (IPA refuses them unless told),
        // read before a token is issued: one issued is never shown again.
        let allow_md5 = match host_find(self.datastore(), &agent.host_id).await? {
            Some(host) => {
                pod_manager_load(self.datastore(), &host.pod_manager)
                    .await?
                    .deploy
                    .allow_md5
            }
            None => false,
        };
        let token = match agent.token_hash {
            Some(_) => None,
            None => {
                let token = new_token();
                let sealed = self.inner.sealer.seal(&token);
                let issued = self
                    .datastore()
                    .agent_issue(
                        &agent.host_id,
                        &crate::auth::hash_token(token.expose()),
                        &sealed,
                        Timestamp::now(),
                    )
                    .await?;
                issued.then_some(token)
            }
        };
        tracing::info!(host = %agent.host_id, issued = token.is_some(), "agent looked up");
        Ok(json!({
            "node": {
                "uuid": agent.host_id,
                "properties": {},
                "instance_info": {},
                "driver_internal_info": {},
            },
            "config": {
                "heartbeat_timeout": HEARTBEAT_TIMEOUT_SECONDS,
                // Ironic's answer once the token was issued: the agent keeps the one it has.
                "agent_token": token.as_ref().map_or("******", Secret::expose),
                "agent_token_required": true,
                "agent_md5_checksum_enable": allow_md5,
            },
        }))
    }

    /// An agent's heartbeat (`POST /v1/heartbeat/{host}`). Accepted (the caller answers 202)
    /// only from the agent holding the host's token, announcing the address Podium gave the
    /// host, and only once Podium reached it there over TLS with the certificate announced.
    pub async fn agent_heartbeat(&self, host: &str, beat: HeartbeatRequest) -> Result<(), Error> {
        let not_expected = || Error::NotFound {
            kind: "expected agent",
            id: host.to_owned(),
        };
        let host = HostId::parse(host).map_err(|_| not_expected())?;
        let agent = self
            .datastore()
            .agent_get(&host)
            .await?
            .ok_or_else(not_expected)?;
        self.inner.agent_windows.count(&host, "heartbeat")?;
        let token = beat.agent_token.as_ref().ok_or(Error::Unauthenticated(
            "a heartbeat needs the agent's token (`agent_token`)",
        ))?;
        let hash = crate::auth::hash_token(token.expose());
        if agent.token_hash.as_deref() != Some(hash.as_str()) {
            return Err(Error::Unauthenticated(
                "this is not the token issued to the agent of this host",
            ));
        }
        let certificate = beat.agent_verify_ca.as_deref().ok_or_else(|| Error::Invalid {
            field: Some("agent_verify_ca".into()),
            message: format!(
                "Podium speaks API {API_VERSION} with agents: the agent serves its API over TLS \
                 and sends its certificate with each heartbeat"
            ),
        })?;
        let url = client::agent_url(&agent.address, &beat.callback_url)?;
        // Reached once per certificate and URL: a heartbeat repeating them is only recorded.
        let known = agent.verified_at.is_some()
            && agent.certificate.as_deref() == Some(certificate)
            && agent.callback_url.as_deref() == Some(beat.callback_url.as_str());
        if !known {
            client::AgentClient::new(&url, certificate, token.clone())?
                .commands()
                .await
                .map_err(|e| Error::Invalid {
                    field: Some("callback_url".into()),
                    message: format!("Podium could not reach the agent at {url}: {e}"),
                })?;
        }
        let recorded = self
            .datastore()
            .agent_heartbeat(
                &host,
                &hash,
                &Heartbeat {
                    callback_url: &beat.callback_url,
                    certificate: Some(certificate),
                    version: beat.agent_version.as_deref(),
                    verified: !known,
                },
                Timestamp::now(),
            )
            .await?;
        if !recorded {
            return Err(not_expected());
        }
        if !known {
            tracing::info!(host = %host, %url, version = ?beat.agent_version, "agent reached");
        }
        Ok(())
    }

    /// The agent a host runs or is about to (an admin's read).
    pub async fn agent_get(&self, caller: &Caller, host: &HostId) -> Result<AgentView, Error> {
        caller.require_admin_read()?;
        host_load(self.datastore(), host).await?;
        let agent = self
            .datastore()
            .agent_get(host)
            .await?
            .ok_or_else(|| Error::NotFound {
                kind: "agent of host",
                id: host.to_string(),
            })?;
        Ok(view(agent))
    }

    /// A client of the host's agent, where one is connected (Podium reached it) and heartbeat
    /// within `alive`.
    pub(crate) async fn agent_connected(
        &self,
        host: &HostId,
        alive: Duration,
    ) -> Result<Option<client::AgentClient>, Error> {
        let Some(agent) = self.datastore().agent_get(host).await? else {
            return Ok(None);
        };
        let (Some(_), Some(beat), Some(url), Some(certificate), Some(sealed)) = (
            agent.verified_at,
            agent.heartbeat_at,
            &agent.callback_url,
            &agent.certificate,
            &agent.token_sealed,
        ) else {
            return Ok(None);
        };
        if beat < Timestamp::now().before(alive) {
            return Ok(None);
        }
        let token = self.inner.sealer.open(sealed).map_err(|_| {
            Error::Internal(anyhow::anyhow!(
                "the agent token of host {host} does not open with this process's key"
            ))
        })?;
        let url = client::agent_url(&agent.address, url)?;
        client::AgentClient::new(&url, certificate, token).map(Some)
    }

    /// The host is booting the deploy ramdisk, with `address`: its agent is expected, with no
    /// token yet.
    pub(crate) async fn agent_expect(&self, host: &HostId, address: &str) -> Result<(), Error> {
        self.datastore()
            .agent_expect(host, address, Timestamp::now())
            .await?;
        Ok(())
    }

    /// The host boots something else: no agent answers for it any more.
    pub(crate) async fn agent_forget(&self, host: &HostId) -> Result<(), Error> {
        self.datastore().agent_forget(host).await?;
        Ok(())
    }
}

/// A fresh token: 32 random bytes, URL-safe base64 (43 characters).
fn new_token() -> Secret {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; TOKEN_BYTES];
    rand::rng().fill_bytes(&mut bytes);
    Secret::new(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The MACs of a lookup's `addresses`, lower case; a 400 naming `addresses` for anything else.
fn lookup_macs(addresses: Option<&str>) -> Result<Vec<String>, Error> {
    let invalid = |message: String| Error::BadRequest {
        field: Some("addresses".into()),
        message,
    };
    let addresses = addresses
        .filter(|a| !a.trim().is_empty())
        .ok_or_else(|| invalid("a lookup names the agent's MACs: `?addresses=MAC,MAC`".into()))?;
    let macs: Vec<String> = addresses
        .split(',')
        .map(|m| m.trim().to_ascii_lowercase())
        .collect();
    if macs.len() > LOOKUP_MACS_MAX {
        return Err(invalid(format!(
            "at most {LOOKUP_MACS_MAX} MACs, not {}",
            macs.len()
        )));
    }
    for mac in &macs {
        let octets: Vec<&str> = mac.split(':').collect();
        if octets.len() != 6
            || !octets
                .iter()
                .all(|o| o.len() == 2 && o.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(invalid(format!(
                "`{}` is not a MAC (six hexadecimal octets separated by colons)",
                mac.chars().take(40).collect::<String>()
            )));
        }
    }
    Ok(macs)
}

fn view(a: AgentRow) -> AgentView {
    let state = match (&a.token_hash, a.verified_at) {
        (None, _) => podium_types::views::AgentState::Booting,
        (Some(_), None) => podium_types::views::AgentState::LookedUp,
        (Some(_), Some(_)) => podium_types::views::AgentState::Connected,
    };
    AgentView {
        state,
        address: a.address,
        expected_since: a.expected_at,
        looked_up_at: a.issued_at,
        url: a.callback_url,
        version: a.version,
        last_heartbeat_at: a.heartbeat_at,
        heartbeats: u64::try_from(a.heartbeats).unwrap_or(0),
        verified_at: a.verified_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_name_macs_only() {
        assert_eq!(
            lookup_macs(Some("52:54:00:AA:bb:01, 52:54:00:aa:bb:02")).unwrap(),
            ["52:54:00:aa:bb:01", "52:54:00:aa:bb:02"]
        );
        for bad in [None, Some(""), Some("52:54:00:aa:bb"), Some("x'; DROP")] {
            let Err(Error::BadRequest { field, .. }) = lookup_macs(bad) else {
                panic!("{bad:?} accepted");
            };
            assert_eq!(field.as_deref(), Some("addresses"));
        }
        let many = vec!["52:54:00:aa:bb:01"; LOOKUP_MACS_MAX + 1].join(",");
        assert!(lookup_macs(Some(&many)).is_err());
    }

    #[test]
    fn tokens_are_long_enough_for_the_agent_and_never_repeat() {
        let (a, b) = (new_token(), new_token());
        assert!(
            a.expose().len() >= 32,
            "IPA ignores a token under 32 characters"
        );
        assert_ne!(a.expose(), b.expose());
    }
}
