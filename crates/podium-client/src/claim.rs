//! `podium claim`: claims on hosts, followed (`--wait`, `watch`) until they settle or are released.

use std::collections::BTreeMap;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use podium_types::requests::{ClaimCreate, ClaimUpdate, ConfigDriveCreate, ImageParams};
use podium_types::views::ClaimView;
use podium_types::{ClaimId, OperationStatus};
use reqwest::Method;
use serde_json::json;

use super::client::{self, Client};
use super::firmware::{BiosArgs, FirmwareArgs, SecureBootArgs, bios, firmware, secure_boot};
use super::input::{key_value, read_json_file, seg};
use super::names::Named;
use super::operation::OPERATION_COLUMNS;
use super::output::{self, Column, Format};
use super::print;
use super::watch::{ClaimProgress, ended, settled_well, watch_claim, watch_release};

#[derive(Debug, Subcommand)]
pub(super) enum ClaimCommand {
    /// List claims (a tenant its own; an admin every tenant's).
    List,
    /// Show a claim: its state, its host and what it asked for.
    Show { id: String },
    /// Claim a host and have it provisioned with an image.
    Create(Box<ClaimCreateArgs>),
    /// Power the claimed host on or off.
    Power {
        id: String,
        #[arg(value_parser = ["on", "off"])]
        state: String,
        /// Follow the power operation until it ends.
        #[arg(long)]
        wait: bool,
    },
    /// Release the claim; its host is deprovisioned before anyone else can have it.
    Delete {
        id: String,
        /// Follow the release until the claim is gone (its host deprovisioned).
        #[arg(long)]
        wait: bool,
    },
    /// The claimed host's BIOS settings; with `--set`, changes those the site lets tenants
    /// change (an operation; the others show read-only).
    Bios {
        id: String,
        #[command(flatten)]
        args: BiosArgs,
    },
    /// The claimed host's secure boot; with `--on` or `--off`, where the site lets tenants,
    /// turns it on or off from the next boot on (an operation).
    SecureBoot {
        id: String,
        #[command(flatten)]
        args: SecureBootArgs,
    },
    /// The claimed host's full inventory as its BMC reports it now.
    Hardware { id: String },
    /// The claimed host's firmware components; with `--update IMAGE_URL --target ID ...`,
    /// where the site lets tenants, updates them from the image (an operation).
    Firmware {
        id: String,
        #[command(flatten)]
        args: FirmwareArgs,
    },
    /// The meta_data.json and network_data.json the claimed host boots with.
    Rendered { id: String },
    /// Show the claim's progress (binding, provisioning, its operations) until it settles.
    Watch { id: String },
    /// The operations run for the claim (provisioning, power, deprovisioning), newest first.
    Operations { id: String },
    /// Make a config drive for the claimed host and print its URL (shown once).
    ConfigDrive {
        id: String,
        /// Seconds the URL works (60 to 86400; default 3600).
        #[arg(long)]
        expires_in: Option<u64>,
    },
}

#[derive(Debug, Args)]
pub(super) struct ClaimCreateArgs {
    /// Any granted pod manager when absent.
    #[arg(long)]
    pod_manager: Option<String>,
    #[arg(long)]
    image: String,
    #[arg(long)]
    checksum: Option<String>,
    #[arg(long)]
    checksum_type: Option<podium_types::ChecksumType>,
    /// How the image is put on the host: `raw` or `qcow2` (written to disk by the deploy
    /// agent, `--checksum` and `--checksum-type` required) or `live-iso`.
    #[arg(long = "image-format", alias = "format")]
    format: Option<podium_types::ImageFormat>,
    /// A root device hint, `key=value`, repeatable: `size` (GiB), `serial`, `wwn`, `name`,
    /// `model`, `vendor`, `rotational` (true or false). The disk a raw or qcow2 image goes to.
    #[arg(long = "root-device", value_parser = key_value)]
    root_device: Vec<(String, String)>,
    /// `key=value`, repeatable.
    #[arg(long = "selector", value_parser = key_value)]
    selector: Vec<(String, String)>,
    #[arg(long)]
    min_cpu: Option<u32>,
    #[arg(long)]
    min_memory_mib: Option<u64>,
    /// A host of this chassis (a rack) or of one within it, by id (a tenant's
    /// `GET /v1/me/pod_managers/{uuid}/chassis` lists them).
    #[arg(long)]
    chassis: Option<String>,
    /// A spread group: this tenant's claims at the pod manager in one group take hosts of
    /// different racks.
    #[arg(long)]
    spread: Option<String>,
    /// Where no free host matches, have a node composed for the claim (at a pod manager that
    /// composes), decomposed when the claim is released.
    #[arg(long, conflicts_with_all = ["selector", "chassis", "spread"])]
    compose: bool,
    /// A file whose bytes become the user data (sent as base64; at most 64 KiB).
    #[arg(long)]
    user_data_file: Option<std::path::PathBuf>,
    /// A JSON file of network_data.json (pod managers whose network config is the consumer's).
    #[arg(long)]
    network_data_file: Option<std::path::PathBuf>,
    /// A metaData key, `key=value`, repeatable.
    #[arg(long = "meta", value_parser = key_value)]
    meta: Vec<(String, String)>,
    /// Leave the host powered off.
    #[arg(long)]
    offline: bool,
    /// Show the claim's progress until its host is provisioned (or it fails).
    #[arg(long)]
    wait: bool,
}

const CLAIM_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("STATE", "/state"),
    ("HOST", "/host/name"),
    ("POWER", "/host/power_state"),
    ("ONLINE", "/online"),
    ("REASON", "/reason"),
];

impl ClaimCommand {
    /// The pod manager a new claim asks for, which may be a name.
    pub(super) fn names(&mut self) -> Vec<(Named, &mut String)> {
        match self {
            ClaimCommand::Create(args) => args
                .pod_manager
                .as_mut()
                .map(|pm| (Named::PodManager, pm))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }
}

pub(super) async fn run(
    url: Option<&str>,
    format: Format,
    cmd: ClaimCommand,
) -> anyhow::Result<()> {
    let c = Client::from_env(url)?;
    match cmd {
        ClaimCommand::List => {
            print(output::list(
                format,
                &c.list("/v1/claims").await?,
                CLAIM_COLUMNS,
            ));
        }
        ClaimCommand::Show { id } => {
            print(output::object(
                format,
                &c.get(&format!("/v1/claims/{}", seg(&id)?)).await?,
            ));
        }
        ClaimCommand::Create(args) => create(&c, format, *args).await?,
        ClaimCommand::Power { id, state, wait } => power(&c, format, id, &state, wait).await?,
        ClaimCommand::Delete { id, wait } => {
            c.delete(&format!("/v1/claims/{}", seg(&id)?)).await?;
            if wait {
                watch_release(&c, &ClaimId::from(id.as_str())).await?;
                eprintln!("released claim {id}: its host was deprovisioned");
            } else {
                eprintln!("releasing claim {id}: its host is being deprovisioned");
            }
        }
        ClaimCommand::Operations { id } => {
            let items = c
                .list(&format!("/v1/claims/{}/operations", seg(&id)?))
                .await?;
            print(output::list(format, &items, OPERATION_COLUMNS));
        }
        ClaimCommand::Watch { id } => {
            let claim = watch_claim(&c, &ClaimId::from(id), ClaimProgress::settled)
                .await?
                .claim;
            print(output::object(format, &serde_json::to_value(&claim)?));
            settled_well(&claim)?;
        }
        ClaimCommand::Bios { id, args } => {
            bios(&c, format, &format!("/v1/claims/{}", seg(&id)?), args).await?;
        }
        ClaimCommand::SecureBoot { id, args } => {
            secure_boot(&c, format, &format!("/v1/claims/{}", seg(&id)?), args).await?;
        }
        ClaimCommand::Hardware { id } => {
            let path = format!("/v1/claims/{}/hardware", seg(&id)?);
            print(output::object(format, &c.get(&path).await?));
        }
        ClaimCommand::Firmware { id, args } => {
            firmware(&c, format, &format!("/v1/claims/{}", seg(&id)?), args).await?;
        }
        ClaimCommand::Rendered { id } => {
            let r = c.get(&format!("/v1/claims/{}/rendered", seg(&id)?)).await?;
            print(output::pretty(&r));
        }
        ClaimCommand::ConfigDrive { id, expires_in } => {
            let drive = c
                .post(
                    &format!("/v1/claims/{}/config_drive", seg(&id)?),
                    &ConfigDriveCreate {
                        phase: None,
                        expires_in,
                    },
                )
                .await?;
            print(output::object(format, &drive));
        }
    }
    Ok(())
}

/// `podium claim create`: with `--wait`, followed until its host is provisioned (or it fails).
async fn create(c: &Client, format: Format, a: ClaimCreateArgs) -> anyhow::Result<()> {
    let user_data_base64 = match a.user_data_file {
        Some(path) => {
            use base64::Engine as _;
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            Some(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
        None => None,
    };
    let body = ClaimCreate {
        pod_manager: a.pod_manager.map(Into::into),
        selector: a.selector.into_iter().collect(),
        min_cpu: a.min_cpu,
        min_memory_mib: a.min_memory_mib,
        image: ImageParams {
            url: a.image,
            checksum: a.checksum,
            checksum_type: a.checksum_type,
            format: a.format,
            root_device: root_device_hints("--root-device", a.root_device)?,
        },
        user_data: None,
        user_data_base64,
        meta_data: (!a.meta.is_empty())
            .then(|| json!(a.meta.into_iter().collect::<BTreeMap<_, _>>())),
        network_data: a
            .network_data_file
            .map(|path| read_json_file(&path))
            .transpose()?,
        online: Some(!a.offline),
        chassis: a.chassis.map(Into::into),
        spread: a.spread,
        compose: a.compose,
    };
    let claim: ClaimView = client::view(c.post("/v1/claims", &body).await?)?;
    let claim = if a.wait {
        watch_claim(c, &claim.id, ClaimProgress::settled)
            .await?
            .claim
    } else {
        claim
    };
    print(output::object(format, &serde_json::to_value(&claim)?));
    settled_well(&claim)?;
    Ok(())
}

/// The hints of `--root-device key=value` (`flag`): `size` a number, `rotational` a boolean,
/// the rest strings; an unknown key is an error naming it.
pub(super) fn root_device_hints(
    flag: &str,
    pairs: Vec<(String, String)>,
) -> anyhow::Result<Option<podium_types::requests::RootDeviceHints>> {
    if pairs.is_empty() {
        return Ok(None);
    }
    let mut hints = serde_json::Map::new();
    for (key, value) in pairs {
        let value = match key.as_str() {
            "size" => json!(
                value
                    .parse::<u64>()
                    .with_context(|| format!("{flag} size={value}: a size in GiB"))?
            ),
            "rotational" => json!(
                value
                    .parse::<bool>()
                    .with_context(|| format!("{flag} rotational={value}: true or false"))?
            ),
            _ => json!(value),
        };
        hints.insert(key, value);
    }
    serde_json::from_value(serde_json::Value::Object(hints))
        .map(Some)
        .with_context(|| flag.to_owned())
}

/// `podium claim power`: with `wait`, follows the power operation it queued until it ends.
async fn power(
    c: &Client,
    format: Format,
    id: String,
    state: &str,
    wait: bool,
) -> anyhow::Result<()> {
    let body = ClaimUpdate {
        online: Some(state == "on"),
        ..ClaimUpdate::default()
    };
    let claim = c
        .send(
            Method::PATCH,
            &format!("/v1/claims/{}", seg(&id)?),
            Some(&body),
        )
        .await?;
    if !wait {
        print(output::object(format, &claim));
        return Ok(());
    }
    // The operation the change queued (none where the host was already so).
    let id = ClaimId::from(id);
    let queued = ClaimProgress::read(c, &id).await?.operation.map(|op| op.id);
    let progress = watch_claim(c, &id, |p| {
        p.operation
            .as_ref()
            .is_none_or(|op| Some(&op.id) != queued.as_ref() || ended(op))
    })
    .await?;
    print(output::object(
        format,
        &serde_json::to_value(&progress.claim)?,
    ));
    if let Some(op) = progress
        .operation
        .filter(|op| op.status == OperationStatus::Failed)
    {
        bail!(
            "powering the claim's host {state} failed: {}",
            op.error.as_deref().unwrap_or("")
        );
    }
    Ok(())
}
