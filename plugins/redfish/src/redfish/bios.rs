//! BIOS settings: the system's `Bios` resource, its `AttributeRegistry` (found through the
//! service's `Registries`, by the `Id` the `Bios` names), the settings object changes are staged
//! in, and `Bios.ResetBios`; and the system's `SecureBoot`.
//!
//! Values are typed by the registry: BMCs differ in how they send them (sushy-tools stores every
//! value as a string, `"True"`, `"12"`), and the host compares what it asked for with what it
//! reads back.

use futures::future::join_all;
use podium_plugin::driver::{
    ApplyTime, Attribute, AttributeEntry, AttributeType, AttributeValue, Bios, BiosChange,
    SecureBoot,
};
use podium_plugin::http::Method;
use podium_plugin::{Error, log};
use serde_json::{Map, Value, json};

use super::{Client, check_system_id, last_segment, link_path};
use crate::error::UrlSource;
use crate::model::{self, ComputerSystem, RegistryAttribute, RegistryFile, ServiceRoot};

/// The most registry files, and registries, one read looks at.
const REGISTRY_READS: usize = 16;

impl Client {
    /// A system's BIOS: its attributes typed by its registry, the registry, what is staged in
    /// the settings object and when the BMC applies a change.
    pub(crate) async fn read_bios(&self, system_id: &str) -> Result<Bios, Error> {
        check_system_id(system_id)?;
        let (path, bios) = self.bios_of(system_id).await?;
        let settings_path = settings_object(&bios)
            .filter(|p| p.trim_end_matches('/') != path.trim_end_matches('/'));
        let (registry, staged) = futures::join!(
            self.attribute_registry(bios.attribute_registry.as_deref()),
            async {
                match &settings_path {
                    Some(p) => Some(self.get::<model::Bios>(p, UrlSource::Service).await),
                    None => None,
                }
            }
        );
        let registry = registry?;
        let entry = |name: &str| registry.iter().find(|e| e.name.as_deref() == Some(name));
        let attributes = |of: &model::Bios| -> Vec<Attribute> {
            of.attributes
                .iter()
                .flatten()
                .map(|(name, value)| Attribute {
                    name: name.clone(),
                    value: typed(name, value, entry(name)),
                })
                .collect()
        };
        let current = attributes(&bios);
        let pending = match staged {
            Some(Ok(staged)) => attributes(&staged)
                .into_iter()
                .filter(|a| {
                    current
                        .iter()
                        .find(|c| c.name == a.name)
                        .is_none_or(|c| c.value != a.value)
                })
                .collect(),
            Some(Err(e)) => {
                log::warn(&format!(
                    "{path}: the settings object cannot be read, so nothing staged is shown: {e}"
                ));
                Vec::new()
            }
            None => Vec::new(),
        };
        let apply_times = bios
            .settings
            .as_ref()
            .and_then(|s| s.supported_apply_times.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|t| apply_time(t))
            .collect();
        Ok(Bios {
            attributes: current,
            registry: registry.iter().filter_map(entry_of).collect(),
            pending,
            apply_times,
        })
    }

    /// PATCHes the attributes into the settings object (the `Bios` itself where it names none),
    /// with the apply time where one is asked for.
    pub(crate) async fn set_bios(&self, system_id: &str, change: &BiosChange) -> Result<(), Error> {
        check_system_id(system_id)?;
        let (path, bios) = self.bios_of(system_id).await?;
        let target = settings_object(&bios).unwrap_or(path);
        let attributes: Map<String, Value> = change
            .attributes
            .iter()
            .map(|a| (a.name.clone(), json_value(a.value.as_ref())))
            .collect();
        let mut body = json!({ "Attributes": attributes });
        if let Some(time) = change.apply_time {
            body["@Redfish.SettingsApplyTime"] = json!({ "ApplyTime": apply_time_name(time) });
        }
        self.send_json(Method::Patch, &target, &body).await
    }

    /// POSTs `Bios.ResetBios` to the target the `Bios` advertises; `unsupported` where it
    /// advertises none.
    pub(crate) async fn reset_bios(&self, system_id: &str) -> Result<(), Error> {
        check_system_id(system_id)?;
        let (path, bios) = self.bios_of(system_id).await?;
        let Some(target) = bios
            .actions
            .and_then(|a| a.reset_bios)
            .and_then(|a| a.target)
        else {
            return Err(Error::Unsupported(format!(
                "resetting the BIOS: {path} offers no Bios.ResetBios"
            )));
        };
        self.send_json(Method::Post, &target, &json!({})).await
    }

    /// The system's `SecureBoot`: whether it is enabled, and the boot running now verified.
    pub(crate) async fn read_secure_boot(&self, system_id: &str) -> Result<SecureBoot, Error> {
        check_system_id(system_id)?;
        let path = self.secure_boot_of(system_id).await?;
        let state: model::SecureBoot = self.get(&path, UrlSource::Service).await?;
        Ok(SecureBoot {
            enabled: state
                .enable
                .ok_or_else(|| Error::Protocol(format!("GET {path}: no SecureBootEnable")))?,
            current_boot: match state.current_boot.as_deref() {
                Some("Enabled") => Some(true),
                Some("Disabled") => Some(false),
                _ => None,
            },
            mode: state.mode,
        })
    }

    /// PATCHes `SecureBootEnable`.
    pub(crate) async fn set_secure_boot(
        &self,
        system_id: &str,
        enabled: bool,
    ) -> Result<(), Error> {
        check_system_id(system_id)?;
        let path = self.secure_boot_of(system_id).await?;
        self.send_json(
            Method::Patch,
            &path,
            &json!({ "SecureBootEnable": enabled }),
        )
        .await
    }

    async fn secure_boot_of(&self, system_id: &str) -> Result<String, Error> {
        let system: ComputerSystem = self.get(system_id, UrlSource::Caller).await?;
        let Some(link) = system.secure_boot else {
            return Err(Error::Unsupported(format!(
                "secure boot: {system_id} links no SecureBoot resource"
            )));
        };
        link_path(&link, &format!("GET {system_id}: SecureBoot"))
    }

    /// The system's `Bios` (by its link: sushy-tools serves it as `BIOS`) and where it is;
    /// `unsupported` where the system links none.
    async fn bios_of(&self, system_id: &str) -> Result<(String, model::Bios), Error> {
        let system: ComputerSystem = self.get(system_id, UrlSource::Caller).await?;
        let Some(link) = system.bios else {
            return Err(Error::Unsupported(format!(
                "BIOS settings: {system_id} links no Bios resource"
            )));
        };
        let path = link_path(&link, &format!("GET {system_id}: Bios"))?;
        let bios = self.get(&path, UrlSource::Service).await?;
        Ok((path, bios))
    }

    /// The entries of the registry `name`, as the service publishes it under `Registries`:
    /// the files whose `Id` is `name`, else those that look like attribute registries, and of
    /// their locations the one whose registry has that `Id`. None where the BMC names none or
    /// publishes none (the values are then typed as they come).
    async fn attribute_registry(
        &self,
        name: Option<&str>,
    ) -> Result<Vec<RegistryAttribute>, Error> {
        let Some(name) = name else {
            return Ok(Vec::new());
        };
        let root: ServiceRoot = self.get(&self.config.root, UrlSource::Service).await?;
        let Some(link) = root.registries else {
            log::info(&format!(
                "no Registries to find attribute registry {name} in"
            ));
            return Ok(Vec::new());
        };
        let collection = link_path(&link, "GET the service root: Registries")?;
        // BMCs list many registries (messages, one per NIC): the ones named like the BIOS's
        // first, before the cap.
        let mut members = self.members(&collection).await?;
        let lower = name.to_ascii_lowercase();
        members.sort_by_key(|m| {
            let last = last_segment(m).to_ascii_lowercase();
            if last == lower {
                0
            } else if last.contains("attributeregistry") || last.contains("bios") {
                1
            } else {
                2
            }
        });
        members.truncate(REGISTRY_READS);
        let files: Vec<RegistryFile> = join_all(
            members
                .iter()
                .map(|m| self.get::<RegistryFile>(m, UrlSource::Service)),
        )
        .await
        .into_iter()
        .filter_map(Result::ok)
        .collect();
        let named: Vec<&RegistryFile> = files
            .iter()
            .filter(|f| f.id.as_deref() == Some(name))
            .collect();
        let candidates = if named.is_empty() {
            files
                .iter()
                .filter(|f| {
                    [&f.id, &f.registry].iter().any(|s| {
                        s.as_deref()
                            .is_some_and(|s| s.to_ascii_lowercase().contains("attributeregistry"))
                    })
                })
                .collect()
        } else {
            named
        };
        let mut uris: Vec<String> = candidates
            .iter()
            .flat_map(|f| {
                let locations = f.location.iter().flatten();
                let english: Vec<_> = locations
                    .clone()
                    .filter(|l| l.language.as_deref().is_none_or(|l| l.starts_with("en")))
                    .filter_map(|l| l.uri.clone())
                    .collect();
                if english.is_empty() {
                    locations.filter_map(|l| l.uri.clone()).collect()
                } else {
                    english
                }
            })
            .filter(|u| u.starts_with('/'))
            .collect();
        let mut seen = std::collections::HashSet::new();
        uris.retain(|u| seen.insert(u.clone()));
        uris.truncate(REGISTRY_READS);
        let registries = join_all(
            uris.iter()
                .map(|u| self.get::<model::AttributeRegistry>(u, UrlSource::Service)),
        )
        .await;
        match registries
            .into_iter()
            .filter_map(Result::ok)
            .find(|r| r.id.as_deref() == Some(name))
        {
            Some(registry) => Ok(registry
                .entries
                .and_then(|e| e.attributes)
                .unwrap_or_default()),
            None => {
                log::warn(&format!(
                    "attribute registry {name} is not among the service's Registries: BIOS \
                     values are typed as they come"
                ));
                Ok(Vec::new())
            }
        }
    }
}

/// Where changes are staged, as the `Bios` says.
fn settings_object(bios: &model::Bios) -> Option<String> {
    bios.settings
        .as_ref()
        .and_then(|s| s.settings_object.as_ref())
        .and_then(|l| l.odata_id.clone())
}

fn attribute_type(entry: &RegistryAttribute) -> Option<AttributeType> {
    Some(match entry.kind.as_deref()? {
        "Enumeration" => AttributeType::Enumeration,
        "String" => AttributeType::Text,
        "Integer" => AttributeType::Integer,
        "Boolean" => AttributeType::Boolean,
        "Password" => AttributeType::Password,
        _ => return None,
    })
}

/// A registry entry as the contract has it; none for an entry without a name or of a type the
/// contract does not know.
fn entry_of(entry: &RegistryAttribute) -> Option<AttributeEntry> {
    let whole = |n: Option<f64>| n.filter(|n| n.fract() == 0.0).map(|n| n as i64);
    let length = |n: Option<f64>| {
        n.filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n <= f64::from(u32::MAX))
            .map(|n| n as u32)
    };
    Some(AttributeEntry {
        name: entry.name.clone()?,
        attribute_type: attribute_type(entry)?,
        display_name: entry.display_name.clone(),
        allowed: entry
            .values
            .iter()
            .flatten()
            .filter_map(|v| v.name.clone())
            .collect(),
        read_only: entry.read_only == Some(true) || entry.immutable == Some(true),
        reset_required: entry.reset_required == Some(true),
        lower_bound: whole(entry.lower_bound),
        upper_bound: whole(entry.upper_bound),
        min_length: length(entry.min_length),
        max_length: length(entry.max_length),
    })
}

/// A value as its registry entry types it (`"True"` of a `Boolean` is `true`, `"12"` of an
/// `Integer` is 12); without an entry, as JSON types it. A password never has one.
pub(crate) fn typed(
    name: &str,
    value: &Value,
    entry: Option<&RegistryAttribute>,
) -> Option<AttributeValue> {
    let kind = entry.and_then(attribute_type);
    if password_named(name) {
        return None;
    }
    match (value, kind) {
        (Value::Null, _) | (_, Some(AttributeType::Password)) => None,
        // A string attribute sent as a number or a boolean is its text.
        (
            Value::Number(_) | Value::Bool(_),
            Some(AttributeType::Text | AttributeType::Enumeration),
        ) => Some(AttributeValue::Text(value.to_string())),
        (Value::Bool(b), _) => Some(AttributeValue::Boolean(*b)),
        (Value::String(s), Some(AttributeType::Boolean)) if s.eq_ignore_ascii_case("true") => {
            Some(AttributeValue::Boolean(true))
        }
        (Value::String(s), Some(AttributeType::Boolean)) if s.eq_ignore_ascii_case("false") => {
            Some(AttributeValue::Boolean(false))
        }
        (Value::String(s), Some(AttributeType::Integer)) => Some(
            s.trim()
                .parse()
                .map_or_else(|_| AttributeValue::Text(s.clone()), AttributeValue::Integer),
        ),
        (Value::String(s), _) => Some(AttributeValue::Text(s.clone())),
        (Value::Number(n), _) => Some(match n.as_i64() {
            Some(i) => AttributeValue::Integer(i),
            None => AttributeValue::Text(n.to_string()),
        }),
        (other, _) => Some(AttributeValue::Text(other.to_string())),
    }
}

/// Whether an attribute's name says it holds a password or a secret (`AdminPassword`, `SysPwd`,
/// `IscsiChapSecret`): its value is never read out, registry or not.
fn password_named(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("password")
        || lower.contains("passwd")
        || lower.contains("pwd")
        || lower.contains("secret")
}

fn json_value(value: Option<&AttributeValue>) -> Value {
    match value {
        None => Value::Null,
        Some(AttributeValue::Text(s)) => Value::from(s.as_str()),
        Some(AttributeValue::Integer(i)) => Value::from(*i),
        Some(AttributeValue::Boolean(b)) => Value::from(*b),
    }
}

fn apply_time(name: &str) -> Option<ApplyTime> {
    Some(match name {
        "Immediate" => ApplyTime::Immediate,
        "OnReset" => ApplyTime::OnReset,
        "AtMaintenanceWindowStart" => ApplyTime::AtMaintenanceWindowStart,
        "InMaintenanceWindowOnReset" => ApplyTime::InMaintenanceWindowOnReset,
        _ => return None,
    })
}

fn apply_time_name(time: ApplyTime) -> &'static str {
    match time {
        ApplyTime::Immediate => "Immediate",
        ApplyTime::OnReset => "OnReset",
        ApplyTime::AtMaintenanceWindowStart => "AtMaintenanceWindowStart",
        ApplyTime::InMaintenanceWindowOnReset => "InMaintenanceWindowOnReset",
    }
}
