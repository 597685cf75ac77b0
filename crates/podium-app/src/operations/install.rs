//! Installing a claim's disk image (`raw`, `qcow2`) in operation `provision`: the host's deploy
//! agent (IPA in the pod manager's ramdisk, `agent/`) writes the image and the claim's config
//! drive to the disk the root device hints name, then the host boots from that disk
//! (`docs/deploy.md`). And cleaning, in operation `deprovision` of such a claim: the agent
//! erases every disk's partition tables and file system signatures before the host is free
//! again, so nothing of a tenant's reaches the next.
//!
//! Where the host already runs the ramdisk with a connected agent (it booted it at inspection),
//! the agent is used at once (Ironic's fast track); otherwise the ramdisk is booted first. Each
//! step can be run again: a provisioning run again after a restart of Podium finds the agent
//! (which heartbeats on) and its command, and waits for it or starts it.

use std::io::Write;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use crate::agent::client::{AgentClient, Command};
use crate::app::Podium;
use crate::data::{ClaimRow, Host, PodManager};
use crate::error::Error;
use podium_types::{
    AgentAnswer, BootPersistence, BootSettings, BootTarget, Cleaning, DisksCleaned, ErrorCode,
    ImageFormat, Installed, PowerAction, ProvisionedBy,
};

/// How long a host's agent has to look up and be reached after its ramdisk was booted.
const AGENT_DEADLINE: Duration = Duration::from_secs(20 * 60);
/// How long the agent has to write an image.
const WRITE_DEADLINE: Duration = Duration::from_secs(60 * 60);
/// How often Podium looks (in the database) for the agent to connect.
const POLL: Duration = Duration::from_secs(2);
/// How often Podium asks the agent about a running command: what a step's end waits for at
/// most (a write of a few seconds is not made to wait two more).
const COMMAND_POLL: Duration = Duration::from_millis(500);
/// An agent that heartbeat this recently is taken to run still (IPA heartbeats every 30 % to
/// 60 % of the 300 s timeout it was given).
const ALIVE: Duration = Duration::from_secs(300);
/// How long a running command may go unanswered (the agent unreachable) before it is given up.
const SILENCE: Duration = Duration::from_secs(120);

/// What a cleaning came to: the disks cleaned, or why not.
pub(super) enum Cleaned {
    Done(DisksCleaned),
    Not(String),
}

impl Cleaned {
    /// As a result shows it: what was cleaned, and why nothing was.
    pub(super) fn into_parts(self) -> (Option<DisksCleaned>, Option<String>) {
        match self {
            Cleaned::Done(done) => (Some(done), None),
            Cleaned::Not(why) => (None, Some(why)),
        }
    }
}

/// A failed install, in words the tenant can act on.
fn failed(message: String) -> Error {
    Error::Conflict {
        code: ErrorCode::DeployFailed,
        message,
    }
}

impl Podium {
    /// Writes the claim's image and `drive` (the config drive's bytes) to the host's disk with
    /// its agent, then boots the host from that disk. What happened, for the operation's result.
    pub(super) async fn install(
        &self,
        pm: &PodManager,
        host: &Host,
        claim: &ClaimRow,
        drive: &[u8],
    ) -> Result<ProvisionedBy, Error> {
        let started = Instant::now();
        let (agent, fast_track) = self
            .deploy_agent(pm, host, "to write a disk image with")
            .await?;
        let agent_ready = started.elapsed();
        let format = match claim.image.format {
            Some(ImageFormat::Qcow2) => ImageFormat::Qcow2,
            _ => ImageFormat::Raw,
        };
        // The claim's hints, else the host's default the admin set, else the agent's choice
        // (the smallest disk of at least 4 GiB).
        let hints = claim
            .image
            .root_device
            .as_ref()
            .or(host.root_device.as_ref())
            .cloned()
            .unwrap_or_default();
        let node = json!({
            "uuid": host.id,
            "properties": {"root_device": hints},
            "instance_info": {},
            "driver_internal_info": {},
        });
        let image_info = json!({
            "id": claim.id,
            "node_uuid": host.id,
            "urls": [claim.image.url],
            "disk_format": format.as_str(),
            "stream_raw_images": true,
            "image_type": "whole-disk",
            "os_hash_algo": claim.image.checksum_type.map(|t| t.as_str()),
            "os_hash_value": claim.image.checksum,
        });
        // From here the disks may hold the tenant's data, whatever becomes of the write: they
        // are cleaned before the host is free again.
        self.datastore()
            .host_disks_written(&host.id, &claim.id)
            .await?;
        let written_started = Instant::now();
        let write = self
            .agent_command(
                &agent,
                "writing the image",
                "deploy.execute_deploy_step",
                json!({
                    "step": {
                        "interface": "deploy",
                        "step": "write_image",
                        "priority": 80,
                        "args": {"image_info": image_info, "configdrive": gzip_base64(drive)?},
                    },
                    "node": node,
                    "ports": [],
                }),
            )
            .await?;
        let written = written_started.elapsed();
        let rebooting = Instant::now();
        // The disk's caches flushed before the power goes.
        self.agent_command(&agent, "flushing the disks", "standby.sync", json!({}))
            .await?;
        let driver = self.drivers().host(pm, host).await?;
        let off = super::provision::power_off_and_eject(&driver, host).await;
        // Forgotten whatever became of the power-off and the ejects: a retry boots the ramdisk
        // again rather than wait on an agent that may be gone.
        self.agent_forget(&host.id).await?;
        off?;
        driver
            .call()
            .set_boot_override(
                &host.system_id,
                BootSettings {
                    target: BootTarget::Hdd,
                    persistence: BootPersistence::Continuous,
                    mode: None,
                },
            )
            .await
            .map_err(Error::from)?;
        driver
            .call()
            .set_power(&host.system_id, PowerAction::On)
            .await
            .map_err(Error::from)?;
        tracing::info!(host = %host.id, claim = %claim.id, fast_track, "installed; booting from disk");
        Ok(ProvisionedBy::Installed {
            installed: Box::new(Installed {
                image: claim.image.url.clone(),
                format,
                root_device: hints,
                fast_track,
                agent_ready_seconds: agent_ready.as_secs_f64(),
                write_seconds: written.as_secs_f64(),
                reboot_seconds: rebooting.elapsed().as_secs_f64(),
                agent_result: AgentAnswer(write.command_result.unwrap_or_default()),
            }),
            boot: BootTarget::Hdd,
        })
    }

    /// Cleans every disk of the host with its agent, booting the ramdisk first unless it runs:
    /// as the pod manager's `deploy.cleaning` says, their metadata (partition tables, file
    /// system signatures: IPA's clean step `erase_devices_metadata`) or every byte
    /// (`erase_devices`). What happened, for the operation's result: what it did, or why not
    /// where the admin disabled cleaning (nothing is done, and the mark stays). The host keeps
    /// the outcome as its last cleaning, and only one that succeeded clears its disks' mark.
    pub(super) async fn clean(&self, pm: &PodManager, host: &Host) -> Result<Cleaned, Error> {
        if pm.deploy.cleaning == Cleaning::Disabled {
            tracing::info!(host = %host.id, "not cleaned: cleaning is disabled on its pod manager");
            return Ok(Cleaned::Not(
                "cleaning is disabled on this pod manager: the tenant's data stays on the disks"
                    .into(),
            ));
        }
        let outcome = self.clean_disks(pm, host).await;
        let record = podium_types::CleaningRecord {
            at: podium_types::Timestamp::now(),
            cleaning: pm.deploy.cleaning,
            claim: host.disks_written_for.clone(),
            succeeded: outcome.is_ok(),
            message: outcome.as_ref().err().map(ToString::to_string),
        };
        self.datastore().host_cleaned(&host.id, &record).await?;
        outcome.map(Cleaned::Done)
    }

    async fn clean_disks(&self, pm: &PodManager, host: &Host) -> Result<DisksCleaned, Error> {
        let started = Instant::now();
        let (agent, fast_track) = self
            .deploy_agent(
                pm,
                host,
                "to clean the disks with (they may hold a tenant's data); or set \
                 `deploy.cleaning` to `disabled`",
            )
            .await?;
        let erase_started = Instant::now();
        let (what, step) = match pm.deploy.cleaning {
            Cleaning::Full => ("erasing the disks", "erase_devices"),
            Cleaning::Metadata | Cleaning::Disabled => {
                ("erasing the disks' metadata", "erase_devices_metadata")
            }
        };
        let erased = self
            .agent_command(
                &agent,
                what,
                "clean.execute_clean_step",
                json!({
                    "step": {
                        "interface": "deploy",
                        "step": step,
                        "priority": 99,
                        "args": {},
                    },
                    "node": {
                        "uuid": host.id,
                        "properties": {},
                        "instance_info": {},
                        "driver_internal_info": {},
                    },
                    "ports": [],
                }),
            )
            .await?;
        tracing::info!(host = %host.id, fast_track, "disks cleaned");
        Ok(DisksCleaned {
            step: step.to_owned(),
            fast_track,
            erase_seconds: erase_started.elapsed().as_secs_f64(),
            seconds: started.elapsed().as_secs_f64(),
            agent_result: AgentAnswer(erased.command_result.unwrap_or_default()),
        })
    }

    /// The host's agent, connected: the one running now (fast track: `true`), else one the
    /// ramdisk it boots now brings up. `purpose` ends the refusal of a site with no ramdisk
    /// ("has no deploy ramdisk ... {purpose}").
    pub(super) async fn deploy_agent(
        &self,
        pm: &PodManager,
        host: &Host,
        purpose: &str,
    ) -> Result<(AgentClient, bool), Error> {
        if let Some(agent) = self.agent_connected(&host.id, ALIVE).await? {
            // It heartbeat lately, but may have died since (the host lost power mid-write):
            // asked first, and booted again when it does not answer.
            match agent.commands().await {
                Ok(_) => return Ok((agent, true)),
                Err(e) => {
                    tracing::info!(host = %host.id, error = %e, "the agent does not answer; booting the ramdisk again");
                    self.agent_forget(&host.id).await?;
                }
            }
        }
        // A ramdisk booted for an agent that has not connected yet, within its deadline (this
        // operation run again after a restart of Podium while the ramdisk booted): waited for,
        // not booted again.
        let now = podium_types::Timestamp::now();
        if let Some(booting) = self.datastore().agent_get(&host.id).await?
            && booting.heartbeat_at.is_none()
            && booting.expected_at > now.before(AGENT_DEADLINE)
        {
            tracing::info!(host = %host.id, since = %booting.expected_at, "waiting for the agent of the ramdisk booted before");
            let left = (booting.expected_at.get() - now.get()) + AGENT_DEADLINE;
            let left = Duration::try_from(left).unwrap_or_default();
            let ramdisk = pm.preprovisioning_image.as_deref().unwrap_or("the ramdisk");
            return self
                .agent_wait(host, ramdisk, left)
                .await
                .map(|a| (a, false));
        }
        let Some(ramdisk) = &pm.preprovisioning_image else {
            return Err(failed(format!(
                "pod manager `{}` has no deploy ramdisk (`preprovisioning_image`) {purpose}",
                pm.name
            )));
        };
        let Some((prepared, drive_path)) = self.preprovisioning_prepare(pm, host).await? else {
            return Err(failed(format!(
                "pod manager `{}` has no DHCP-less pool to give host `{}`'s deploy ramdisk an \
                 address from",
                pm.name, host.id
            )));
        };
        let address = prepared
            .addresses
            .first()
            .ok_or_else(|| failed("the deploy ramdisk was given no address".into()))?;
        self.agent_expect(&host.id, &address.address).await?;
        self.boot_from_media(pm, host, ramdisk, &drive_path).await?;
        self.agent_wait(host, ramdisk, AGENT_DEADLINE)
            .await
            .map(|a| (a, false))
    }

    /// Waits up to `within` for the agent of the ramdisk booted on the host to connect.
    async fn agent_wait(
        &self,
        host: &Host,
        ramdisk: &str,
        within: Duration,
    ) -> Result<AgentClient, Error> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(agent) = self.agent_connected(&host.id, ALIVE).await? {
                return Ok(agent);
            }
            if Instant::now() >= deadline {
                let seen = self.datastore().agent_get(&host.id).await?;
                let how = match seen {
                    Some(a) if a.token_hash.is_some() => {
                        "looked up but Podium could not reach it at the address it was given"
                    }
                    _ => "never looked up (did the ramdisk boot, and can it reach Podium?)",
                };
                return Err(failed(format!(
                    "the deploy agent of host `{}` {how} within {} s of booting {ramdisk}",
                    host.id,
                    AGENT_DEADLINE.as_secs()
                )));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Runs a command on the agent and waits for its end: its last status when it succeeded,
    /// a `deploy_failed` error saying `what` failed, in the agent's words, when not.
    async fn agent_command(
        &self,
        agent: &AgentClient,
        what: &str,
        name: &str,
        params: Value,
    ) -> Result<Command, Error> {
        // The same command running or done on this agent (a provisioning run again after a
        // restart of Podium, which the agent outlived) is followed, not started twice: the
        // agent runs one command at a time, and a successful write is never undone before the
        // host leaves the ramdisk.
        let earlier = agent
            .commands()
            .await
            .map_err(|e| failed(format!("{what}: {e}")))?
            .into_iter()
            .filter_map(|c| serde_json::from_value::<Command>(c).ok())
            .rfind(|c| c.command_name == name.rsplit('.').next().unwrap_or(name));
        let mut command = match earlier {
            Some(c) if c.running() || c.succeeded() => {
                tracing::info!(command = %c.command_name, status = %c.command_status, "following the agent's command");
                c
            }
            _ => agent
                .start(name, params)
                .await
                .map_err(|e| failed(format!("{what}: {e}")))?,
        };
        let deadline = Instant::now() + WRITE_DEADLINE;
        let mut answered = Instant::now();
        while command.running() {
            if Instant::now() >= deadline {
                return Err(failed(format!(
                    "{what}: the agent did not finish within {} s",
                    WRITE_DEADLINE.as_secs()
                )));
            }
            tokio::time::sleep(COMMAND_POLL).await;
            match agent.command(&command.id).await {
                Ok(now) => {
                    command = now;
                    answered = Instant::now();
                }
                Err(e) if answered.elapsed() > SILENCE => {
                    return Err(failed(format!(
                        "{what}: the deploy agent stopped answering: {e}"
                    )));
                }
                Err(e) => tracing::info!(error = %e, "the agent did not answer; asking again"),
            }
        }
        if command.succeeded() {
            Ok(command)
        } else {
            Err(failed(format!(
                "{what} failed: {}",
                command.error_message()
            )))
        }
    }
}

/// The config drive as IPA takes it inline: gzipped, then base64.
fn gzip_base64(drive: &[u8]) -> Result<String, Error> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(drive)
        .and_then(|()| gz.finish())
        .map(|bytes| base64::engine::general_purpose::STANDARD.encode(bytes))
        .map_err(|e| Error::Internal(anyhow::anyhow!("compressing the config drive: {e}")))
}
