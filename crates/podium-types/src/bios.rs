//! BIOS settings as Podium shows and changes them: a host's attributes, the registry that says
//! what each may hold, what is staged and when a change applies (DMTF's `Bios` and
//! `AttributeRegistry`, as a driver reports them); and its UEFI secure boot.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::names::names;

names! {
    /// What an attribute holds (DMTF's `AttributeType`).
    pub enum BiosAttributeType ("a BIOS attribute type") {
        Enumeration => "enumeration",
        Text => "string",
        Integer => "integer",
        Boolean => "boolean",
        Password => "password",
    }
}

names! {
    /// When a staged change applies (Redfish `@Redfish.SettingsApplyTime`).
    pub enum ApplyTime ("an apply time") {
        Immediate => "immediate",
        OnReset => "on_reset",
        AtMaintenanceWindowStart => "at_maintenance_window_start",
        InMaintenanceWindowOnReset => "in_maintenance_window_on_reset",
    }
}

/// An attribute's value: a string (of an `enumeration`, a `string` or a `password`), an integer
/// or a boolean.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(untagged)]
pub enum BiosValue {
    Boolean(bool),
    Integer(i64),
    Text(String),
}

impl<'de> Deserialize<'de> for BiosValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::Bool(b) => Ok(BiosValue::Boolean(b)),
            serde_json::Value::String(s) => Ok(BiosValue::Text(s)),
            serde_json::Value::Number(n) if n.is_i64() => {
                Ok(BiosValue::Integer(n.as_i64().unwrap_or_default()))
            }
            _ => Err(serde::de::Error::custom(
                "expected a string, a whole number within 64 bits, or true or false",
            )),
        }
    }
}

/// Whether `name` is an attribute name as the contract has them: 1 to 256 ASCII letters,
/// digits, `_`, `-` and `.`.
pub fn is_attribute_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 256
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Whether an attribute's name says it holds a password or a secret (`AdminPassword`, `SysPwd`,
/// `IscsiChapSecret`): Podium shows no value of it and sets none, whatever the registry says,
/// or where there is none.
pub fn is_password_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("password")
        || lower.contains("passwd")
        || lower.contains("pwd")
        || lower.contains("secret")
}

impl std::fmt::Display for BiosValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BiosValue::Boolean(b) => write!(f, "{b}"),
            BiosValue::Integer(i) => write!(f, "{i}"),
            BiosValue::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// What one attribute may hold, as the BMC's registry says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct BiosAttributeEntry {
    #[serde(rename = "type")]
    pub attribute_type: BiosAttributeType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// An `enumeration`'s values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_values: Vec<String>,
    /// Never changed through Podium.
    pub read_only: bool,
    /// A change applies only at the host's next reset.
    pub reset_required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower_bound: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper_bound: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
}

/// A host's BIOS as its BMC reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Bios {
    /// The current values, by attribute name; `null` where the BMC reports none, and always for
    /// a password.
    #[schema(value_type = Object)]
    pub attributes: BTreeMap<String, Option<BiosValue>>,
    /// What each attribute may hold, by name; empty where the BMC publishes no registry (then
    /// only attributes it reports are taken, as they come).
    pub registry: BTreeMap<String, BiosAttributeEntry>,
    /// Changes staged and not applied yet.
    #[schema(value_type = Object)]
    pub pending: BTreeMap<String, Option<BiosValue>>,
    /// When the BMC can apply a change; empty where it does not say.
    pub apply_times: Vec<ApplyTime>,
}

/// A change of BIOS attributes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BiosChange {
    /// The attributes to change and their new values.
    pub attributes: BTreeMap<String, BiosValue>,
    /// When the change applies; left to the BMC where absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_time: Option<ApplyTime>,
}

/// A host's UEFI secure boot as its BMC reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SecureBoot {
    /// Enforced from the next boot on.
    pub enabled: bool,
    /// Whether the boot running now was verified; absent where the BMC does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_boot: Option<bool>,
    /// Redfish `SecureBootMode` (`SetupMode`, `UserMode`, `AuditMode`, `DeployedMode`), where
    /// reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// Secure boot on or off.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SecureBootChange {
    pub enabled: bool,
}

/// What a pod manager's tenants may change of the hosts they claim, through the JSON API and
/// their Redfish service; nothing unless the admin says so.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TenantFirmware {
    /// The BIOS attributes tenants may change, by name (at most 1,000). Every other attribute
    /// is read-only to them, and they cannot reset the BIOS to its defaults.
    #[serde(default)]
    pub bios_attributes: BTreeSet<String>,
    /// Whether tenants may turn secure boot on and off.
    #[serde(default)]
    pub secure_boot: bool,
    /// Whether tenants may update the firmware of their hosts from an image.
    #[serde(default)]
    pub firmware_update: bool,
}

/// The firmware settings every host of a pod manager is given before it is `available`, as
/// Metal3's HostFirmwareSettings: applied by each inspection, which fails where the BMC cannot
/// take them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FirmwareProfile {
    /// BIOS attributes and the values they are to hold (at most 1,000; no password).
    #[serde(default)]
    #[schema(value_type = Object)]
    pub bios: BTreeMap<String, BiosValue>,
    /// Secure boot on (`true`) or off; absent: left as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure_boot: Option<bool>,
}

impl FirmwareProfile {
    /// Whether it asks for nothing.
    pub fn is_empty(&self) -> bool {
        self.bios.is_empty() && self.secure_boot.is_none()
    }
}

impl Bios {
    /// The BIOS as a tenant allowed to change `allowed` sees it: every other attribute of the
    /// registry is read-only.
    pub fn restricted_to(mut self, allowed: &BTreeSet<String>) -> Bios {
        for (name, entry) in &mut self.registry {
            if !allowed.contains(name) {
                entry.read_only = true;
            }
        }
        self
    }
}

/// What a `bios` operation does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BiosAction {
    /// Stage the change; the operation then reads the BIOS back and checks it.
    Set(BiosChange),
    /// Reset every attribute to its default.
    Reset,
}
