//! A host's BIOS, secure boot and firmware from the command line: `podium host bios|secure-boot|
//! firmware` for an admin, `podium claim bios|secure-boot|firmware` for a tenant's claimed host
//! (the same arguments and output, under `/v1/hosts/{id}` or `/v1/claims/{id}`).

use anyhow::bail;
use clap::Args;
use podium_types::views::OperationView;
use podium_types::{
    Bios, BiosChange, BiosValue, Firmware, FirmwareUpdate, OperationStatus, SecureBootChange,
};
use reqwest::Method;
use serde_json::json;

use super::client::{self, Client};
use super::input::parsed;
use super::output::{self, Column, Format};
use super::print;
use super::watch::watch_operation;

#[derive(Debug, Args)]
pub(super) struct BiosArgs {
    /// `NAME=VALUE`, repeatable. VALUE is read as JSON where it is one (`true`, `12`, `"12"`
    /// for the string), else as a string (`Disabled`).
    #[arg(long = "set", value_parser = super::input::key_value, conflicts_with = "reset")]
    set: Vec<(String, String)>,
    /// When the change applies: immediate, on_reset, at_maintenance_window_start,
    /// in_maintenance_window_on_reset (default: as the BMC decides).
    #[arg(long, requires = "set")]
    apply_time: Option<String>,
    #[arg(long)]
    reset: bool,
    /// Follow the operation until it ends.
    #[arg(long)]
    wait: bool,
}

#[derive(Debug, Args)]
pub(super) struct SecureBootArgs {
    #[arg(long, conflicts_with = "off")]
    on: bool,
    #[arg(long)]
    off: bool,
    /// Follow the operation until it ends.
    #[arg(long)]
    wait: bool,
}

#[derive(Debug, Args)]
pub(super) struct FirmwareArgs {
    /// The image the BMC downloads: an http or https URL, without credentials.
    #[arg(long, value_name = "IMAGE_URL", requires = "targets")]
    update: Option<String>,
    /// A component to update, by its id (the first column of the list); repeatable.
    #[arg(long = "target", value_name = "ID", requires = "update")]
    targets: Vec<String>,
    /// Follow the operation until it ends.
    #[arg(long, requires = "update")]
    wait: bool,
}

/// The BIOS under `base` (`/v1/hosts/{id}` or `/v1/claims/{id}`): a table, or a change or a
/// reset as an operation.
pub(super) async fn bios(
    c: &Client,
    format: Format,
    base: &str,
    args: BiosArgs,
) -> anyhow::Result<()> {
    let BiosArgs {
        set,
        apply_time,
        reset,
        wait,
    } = args;
    let path = format!("{base}/bios");
    let op: Option<OperationView> = if reset {
        Some(client::view(
            c.post(&format!("{path}/reset"), &json!({})).await?,
        )?)
    } else if !set.is_empty() {
        let change = BiosChange {
            attributes: set
                .into_iter()
                .map(|(name, value)| (name, bios_value(&value)))
                .collect(),
            apply_time: apply_time.map(|t| parsed("--apply-time", &t)).transpose()?,
        };
        Some(client::view(
            c.send(Method::PATCH, &path, Some(&change)).await?,
        )?)
    } else {
        None
    };
    match op {
        Some(op) => follow(c, format, op, wait, "BIOS").await,
        None => {
            let bios: Bios = c.get_view(&path).await?;
            print(output::list(format, &bios_rows(&bios), BIOS_COLUMNS));
            Ok(())
        }
    }
}

/// Secure boot under `base`: shown, or turned on or off as an operation.
pub(super) async fn secure_boot(
    c: &Client,
    format: Format,
    base: &str,
    args: SecureBootArgs,
) -> anyhow::Result<()> {
    let SecureBootArgs { on, off, wait } = args;
    let path = format!("{base}/secure_boot");
    if on || off {
        let change = SecureBootChange { enabled: on };
        let op = client::view(c.send(Method::PUT, &path, Some(&change)).await?)?;
        follow(c, format, op, wait, "secure boot").await
    } else {
        print(output::object(format, &c.get(&path).await?));
        Ok(())
    }
}

/// The firmware components under `base`: a table, or an update as an operation.
pub(super) async fn firmware(
    c: &Client,
    format: Format,
    base: &str,
    args: FirmwareArgs,
) -> anyhow::Result<()> {
    let FirmwareArgs {
        update,
        targets,
        wait,
    } = args;
    let path = format!("{base}/firmware");
    match update {
        Some(image_url) => {
            let update = FirmwareUpdate { image_url, targets };
            let op = client::view(c.post(&format!("{path}/update"), &update).await?)?;
            follow(c, format, op, wait, "firmware update").await
        }
        None => {
            let firmware: Firmware = c.get_view(&path).await?;
            let rows: Vec<serde_json::Value> = firmware
                .components
                .iter()
                .map(serde_json::to_value)
                .collect::<Result<_, _>>()?;
            print(output::list(format, &rows, FIRMWARE_COLUMNS));
            Ok(())
        }
    }
}

/// Prints an operation `op` of `what`, after following it to its end with `wait`; fails where
/// it failed.
async fn follow(
    c: &Client,
    format: Format,
    mut op: OperationView,
    wait: bool,
    what: &str,
) -> anyhow::Result<()> {
    if wait {
        op = watch_operation(c, &op.id).await?;
    }
    print(output::object(format, &serde_json::to_value(&op)?));
    if op.status == OperationStatus::Failed {
        bail!(
            "the {what} operation failed: {}",
            op.error.as_deref().unwrap_or("")
        );
    }
    Ok(())
}

const FIRMWARE_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("KIND", "/kind"),
    ("NAME", "/name"),
    ("VERSION", "/version"),
    ("UPDATEABLE", "/updateable"),
];

const BIOS_COLUMNS: &[Column] = &[
    ("NAME", "/name"),
    ("VALUE", "/value"),
    ("TYPE", "/type"),
    ("READ ONLY", "/read_only"),
    ("PENDING", "/pending"),
];

/// One row per attribute: its value, its registry entry's type and whether it is read-only,
/// and what is staged for it.
fn bios_rows(bios: &Bios) -> Vec<serde_json::Value> {
    bios.attributes
        .iter()
        .map(|(name, value)| {
            let entry = bios.registry.get(name);
            json!({
                "name": name,
                "value": value,
                "type": entry.map(|e| e.attribute_type.as_str()),
                "read_only": entry.map(|e| e.read_only),
                "pending": bios.pending.get(name),
            })
        })
        .collect()
}

/// A `--set` value: JSON where it is a JSON string, number or boolean, else the text itself.
fn bios_value(text: &str) -> BiosValue {
    serde_json::from_str(text).unwrap_or_else(|_| BiosValue::Text(text.to_owned()))
}
