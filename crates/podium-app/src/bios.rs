//! A host's BIOS settings: read through its driver, changed (checked against the BMC's attribute
//! registry before anything is sent) and reset to defaults, each change an operation in the
//! host's queue that reads the BIOS back and says what applied and what is staged. And its
//! secure boot, read and turned on or off likewise.

use std::collections::BTreeMap;

use podium_runtime::{CallError, PluginError};
use podium_types::{
    Bios, BiosAction, BiosAttributeType, BiosChange, BiosValue, ClaimId, ErrorCode,
    FirmwareProfile, OperationRequest, OperationResult, SecureBoot, SecureBootChange,
    TenantFirmware,
};
use podium_types::{BiosApplied, ProfileApplied, ProfileBios, ProfileSecureBoot, SecureBootSet};

use crate::data::Host;
use crate::drivers::Driver;
use crate::error::Error;

/// The most attributes one change sets.
const CHANGE_MAX: usize = 1000;
/// The longest text value taken.
const TEXT_MAX: usize = 4096;

/// Checks a change of BIOS attributes on its own and against what the asker may change (a
/// tenant, what `allowed` lets it): a 422 naming the attribute. Nothing is asked of the BMC.
pub(crate) fn change_allowed(
    change: &BiosChange,
    allowed: &TenantFirmware,
    asker: &Asker,
) -> Result<(), Error> {
    change_shape(change)?;
    if let Asker::Tenant(_) = asker {
        tenant_may_set(allowed, change)?;
    }
    Ok(())
}

/// Checks an allowed change (`change_allowed`) against the BIOS as read now through `driver`
/// (a 422 naming the attribute): the operation to queue.
pub(crate) async fn change_request(
    driver: &Driver<'_>,
    host: &Host,
    change: BiosChange,
) -> Result<OperationRequest, Error> {
    let bios = read(driver, host).await?;
    change_check(&bios, &change)?;
    Ok(OperationRequest::Bios(BiosAction::Set(change)))
}

/// Whether the asker may reset the BIOS: an admin only (a reset changes every attribute).
pub(crate) fn reset_allowed(asker: &Asker) -> Result<(), Error> {
    if let Asker::Tenant(_) = asker {
        return Err(Error::Forbidden(
            "a reset sets every BIOS attribute to its default: only the site's admin can \
             reset the BIOS"
                .into(),
        ));
    }
    Ok(())
}

/// Checks a reset of the BIOS attributes to defaults, where the BMC has BIOS settings: the
/// operation to queue.
pub(crate) async fn reset_request(
    driver: &Driver<'_>,
    host: &Host,
) -> Result<OperationRequest, Error> {
    read(driver, host).await?;
    Ok(OperationRequest::Bios(BiosAction::Reset))
}

/// Whether the asker may turn secure boot on or off: an admin, or a tenant where `allowed`
/// says so.
pub(crate) fn secure_boot_allowed(allowed: &TenantFirmware, asker: &Asker) -> Result<(), Error> {
    if let Asker::Tenant(_) = asker
        && !allowed.secure_boot
    {
        return Err(Error::Forbidden(
            "this site does not let tenants turn secure boot on or off".into(),
        ));
    }
    Ok(())
}

/// Checks turning secure boot on or off, where the BMC has it for the host: the operation to
/// queue.
pub(crate) async fn secure_boot_request(
    driver: &Driver<'_>,
    host: &Host,
    change: SecureBootChange,
) -> Result<OperationRequest, Error> {
    secure_boot_read(driver, host).await?;
    Ok(OperationRequest::SecureBoot {
        enabled: change.enabled,
    })
}

/// The host's secure boot as its BMC reports it now.
pub(crate) async fn secure_boot_read(
    driver: &Driver<'_>,
    host: &Host,
) -> Result<SecureBoot, Error> {
    driver
        .call()
        .read_secure_boot(&host.system_id)
        .await
        .map_err(|e| unsupported(host, ErrorCode::SecureBootUnsupported, "secure boot", e))
}

/// Carries out a `secure_boot` operation: the change, then secure boot read back, which must
/// show it.
pub(crate) async fn secure_boot_execute(
    driver: &Driver<'_>,
    host: &Host,
    enabled: bool,
) -> Result<Option<OperationResult>, Error> {
    let set = secure_boot_set(driver, host, enabled).await?;
    Ok(Some(OperationResult::SecureBoot(set)))
}

/// Turns secure boot on or off and reads it back: a BMC that took the change but shows
/// otherwise is a 409 `secure_boot_not_applied`.
async fn secure_boot_set(
    driver: &Driver<'_>,
    host: &Host,
    enabled: bool,
) -> Result<SecureBootSet, Error> {
    driver
        .call()
        .set_secure_boot(&host.system_id, enabled)
        .await
        .map_err(|e| unsupported(host, ErrorCode::SecureBootUnsupported, "secure boot", e))?;
    let after = secure_boot_read(driver, host).await?;
    if after.enabled != enabled {
        return Err(Error::Conflict {
            code: ErrorCode::SecureBootNotApplied,
            message: format!(
                "the BMC took the change but reports secure boot {}",
                if after.enabled { "enabled" } else { "disabled" }
            ),
        });
    }
    Ok(SecureBootSet {
        enabled: after.enabled,
        current_boot: after.current_boot,
    })
}

/// Gives the host its pod manager's firmware `profile` (an inspection's last step, before the
/// host is `available`): the BIOS attributes that differ from it are changed (checked against
/// the registry as a change is) and secure boot turned on or off. What the BMC stages for the
/// next reset stays staged: the host's provisioning resets it before its tenant's system runs.
/// Where the BMC cannot take the profile, a 409 `firmware_profile_not_applied` saying why; a
/// BMC that does not answer fails as any call does (and is tried again).
pub(crate) async fn profile_apply(
    driver: &Driver<'_>,
    host: &Host,
    profile: &FirmwareProfile,
) -> Result<ProfileApplied, Error> {
    let refused = |e: Error| match e {
        Error::Invalid { field, message } => not_applied(
            host,
            match field {
                Some(field) => format!("{field}: {message}"),
                None => message,
            },
        ),
        Error::Conflict { message, .. } => not_applied(host, message),
        other => other,
    };
    let mut result = ProfileApplied::default();
    if !profile.bios.is_empty() {
        let bios = read(driver, host).await.map_err(refused)?;
        let holds = |name: &String, value: &BiosValue| {
            let value = Some(value.clone());
            bios.attributes.get(name) == Some(&value) || bios.pending.get(name) == Some(&value)
        };
        let change = BiosChange {
            attributes: profile
                .bios
                .iter()
                .filter(|(name, value)| !holds(name, value))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
            apply_time: None,
        };
        let (mut changed, mut pending) = (Vec::new(), Vec::new());
        if !change.attributes.is_empty() {
            change_check(&bios, &change).map_err(refused)?;
            driver
                .call()
                .set_bios(&host.system_id, &change)
                .await
                .map_err(|e| refused(bios_error(host, e)))?;
            let after = read(driver, host).await.map_err(refused)?;
            let (a, p) = taken(&after, &change).map_err(refused)?;
            changed = a.into_iter().cloned().collect::<Vec<String>>();
            pending = p.into_iter().cloned().collect::<Vec<String>>();
        }
        result.bios = Some(ProfileBios { changed, pending });
    }
    if let Some(enabled) = profile.secure_boot {
        let now = secure_boot_read(driver, host).await.map_err(refused)?;
        if now.enabled != enabled {
            secure_boot_set(driver, host, enabled)
                .await
                .map_err(refused)?;
        }
        result.secure_boot = Some(ProfileSecureBoot {
            enabled,
            changed: now.enabled != enabled,
        });
    }
    Ok(result)
}

/// The host's BIOS as its BMC reports it now: its attributes, registry and what is staged.
pub(crate) async fn read(driver: &Driver<'_>, host: &Host) -> Result<Bios, Error> {
    driver
        .call()
        .read_bios(&host.system_id)
        .await
        .map_err(|e| bios_error(host, e))
}

/// Carries out a `bios` operation: the change (checked again: the BIOS may have changed since
/// it was asked for), then the BIOS read back. A value the BMC neither shows nor stages fails
/// the operation, naming it.
pub(crate) async fn execute(
    driver: &Driver<'_>,
    host: &Host,
    action: &BiosAction,
) -> Result<Option<OperationResult>, Error> {
    match action {
        BiosAction::Set(change) => {
            let before = read(driver, host).await?;
            change_check(&before, change)?;
            driver
                .call()
                .set_bios(&host.system_id, change)
                .await
                .map_err(|e| bios_error(host, e))?;
            let after = read(driver, host).await?;
            let (applied, pending) = taken(&after, change)?;
            Ok(Some(OperationResult::Bios(BiosApplied {
                applied: Some(applied.into_iter().cloned().collect()),
                pending: pending.into_iter().cloned().collect(),
            })))
        }
        BiosAction::Reset => {
            driver
                .call()
                .reset_bios(&host.system_id)
                .await
                .map_err(|e| bios_error(host, e))?;
            let after = read(driver, host).await?;
            Ok(Some(OperationResult::Bios(BiosApplied {
                applied: None,
                pending: after.pending.keys().cloned().collect(),
            })))
        }
    }
}

/// Who asks for a firmware change: the site's admin, or a tenant through the claim that holds
/// the host, within what the host's pod manager lets tenants change (`TenantFirmware`).
pub(crate) enum Asker {
    Admin,
    Tenant(ClaimId),
}

/// The most names a refusal lists.
const LISTED_MAX: usize = 20;

/// Whether a tenant may change every attribute of `change`: a 422 naming the first it may not,
/// and listing those it may.
fn tenant_may_set(allowed: &TenantFirmware, change: &BiosChange) -> Result<(), Error> {
    let Some(name) = change
        .attributes
        .keys()
        .find(|n| !allowed.bios_attributes.contains(*n))
    else {
        return Ok(());
    };
    let may = &allowed.bios_attributes;
    let message = if may.is_empty() {
        format!("this site lets tenants change no BIOS attribute, `{name}` neither")
    } else {
        let mut listed: Vec<&str> = may.iter().take(LISTED_MAX).map(String::as_str).collect();
        if may.len() > LISTED_MAX {
            listed.push("…");
        }
        format!(
            "this site does not let tenants change `{name}`; they may change {}",
            listed.join(", ")
        )
    };
    Err(invalid(&format!("attributes.{name}"), message))
}

/// What the BIOS read after a change shows of it: the attributes that hold their new values, and
/// those staged with them; one that shows neither is a 409 `bios_not_applied` naming it.
fn taken<'c>(
    after: &Bios,
    change: &'c BiosChange,
) -> Result<(Vec<&'c String>, Vec<&'c String>), Error> {
    let (mut applied, mut pending) = (Vec::new(), Vec::new());
    for (name, wanted) in &change.attributes {
        let wanted = Some(wanted.clone());
        if after.attributes.get(name) == Some(&wanted) {
            applied.push(name);
        } else if after.pending.get(name) == Some(&wanted) {
            pending.push(name);
        } else {
            let now = match after.attributes.get(name) {
                Some(Some(v)) => v.to_string(),
                _ => "nothing".into(),
            };
            return Err(Error::Conflict {
                code: ErrorCode::BiosNotApplied,
                message: format!(
                    "the BMC took the change of `{name}` but reports {now}, and stages nothing \
                     for it"
                ),
            });
        }
    }
    Ok((applied, pending))
}

/// The pod manager's firmware profile cannot be given to the host, and why.
fn not_applied(host: &Host, why: String) -> Error {
    Error::Conflict {
        code: ErrorCode::FirmwareProfileNotApplied,
        message: format!(
            "the pod manager's firmware profile cannot be given to host `{}`: {why}",
            host.id
        ),
    }
}

/// A driver's failure, with a BMC without BIOS settings as a 409 naming the capability.
fn bios_error(host: &Host, e: CallError) -> Error {
    unsupported(host, ErrorCode::BiosUnsupported, "BIOS settings", e)
}

/// A driver's failure, with a BMC without `what` for the host as a 409 `code` naming it.
pub(crate) fn unsupported(host: &Host, code: ErrorCode, what: &str, e: CallError) -> Error {
    match e {
        CallError::Plugin {
            error: PluginError::Unsupported(why),
            ..
        } => Error::Conflict {
            code,
            message: format!(
                "host `{}` has no {what} Podium can reach (its driver says: {why})",
                host.id
            ),
        },
        other => Error::from(other),
    }
}

/// Checks what an admin lets tenants change: at most [`CHANGE_MAX`] BIOS attributes, each a
/// name as the contract has them and none a password's.
pub(crate) fn tenant_firmware_check(t: &TenantFirmware) -> Result<(), Error> {
    let field = "tenant_firmware.bios_attributes";
    if t.bios_attributes.len() > CHANGE_MAX {
        return Err(invalid(field, format!("at most {CHANGE_MAX} attributes")));
    }
    for name in &t.bios_attributes {
        if !podium_types::is_attribute_name(name) {
            let shown: String = name.chars().take(64).collect();
            return Err(invalid(
                field,
                format!(
                    "{shown:?} is no attribute name: 1 to 256 ASCII letters, digits, `_`, `-` \
                     or `.`"
                ),
            ));
        }
        if podium_types::is_password_name(name) {
            return Err(invalid(
                field,
                format!("`{name}` is a password: Podium sets no BIOS password"),
            ));
        }
    }
    Ok(())
}

/// Checks what a change is on its own, before the BMC is asked anything: at least one
/// attribute and at most [`CHANGE_MAX`], each a name as the contract has them, no password
/// (by its name), every string plain text of at most [`TEXT_MAX`] bytes. A 422 names the first
/// that is not.
pub(crate) fn change_shape(change: &BiosChange) -> Result<(), Error> {
    if change.attributes.is_empty() {
        return Err(invalid(
            "attributes",
            "name at least one attribute to change".into(),
        ));
    }
    if change.attributes.len() > CHANGE_MAX {
        return Err(invalid(
            "attributes",
            format!("at most {CHANGE_MAX} attributes change at once"),
        ));
    }
    attributes_shape("attributes", &change.attributes)
}

/// Checks the attributes of a change or a profile on their own (`field` names them in a
/// refusal): each a name as the contract has them, no password (by its name), every string plain
/// text of at most [`TEXT_MAX`] bytes.
fn attributes_shape(field: &str, attributes: &BTreeMap<String, BiosValue>) -> Result<(), Error> {
    // Names first: a name is echoed in the field and message of a refusal.
    if let Some(bad) = attributes
        .keys()
        .find(|n| !podium_types::is_attribute_name(n))
    {
        let shown: String = bad.chars().take(64).collect();
        return Err(invalid(
            field,
            format!(
                "{shown:?} is no attribute name: 1 to 256 ASCII letters, digits, `_`, `-` or `.`"
            ),
        ));
    }
    for (name, value) in attributes {
        let field = format!("{field}.{name}");
        // An operation's request is kept and shown: a password would be too.
        if podium_types::is_password_name(name) {
            return Err(password(field, name));
        }
        text_check(&field, value, None, None)?;
    }
    Ok(())
}

/// Checks a pod manager's firmware profile on its own: at most [`CHANGE_MAX`] attributes, each
/// as a change's is.
pub(crate) fn profile_check(profile: &FirmwareProfile) -> Result<(), Error> {
    let field = "firmware_profile.bios";
    if profile.bios.len() > CHANGE_MAX {
        return Err(invalid(field, format!("at most {CHANGE_MAX} attributes")));
    }
    attributes_shape(field, &profile.bios)
}

/// Checks a change against the BIOS as read: every attribute one the host has, not read-only,
/// with a value its registry allows; the apply time one the BMC offers. A 422 names the first
/// attribute that is not. A refusal never quotes the value sent.
pub(crate) fn change_check(bios: &Bios, change: &BiosChange) -> Result<(), Error> {
    change_shape(change)?;
    if change.apply_time.is_some() && bios.apply_times.is_empty() {
        return Err(invalid(
            "apply_time",
            "the BMC does not say when it can apply a change: leave apply_time out, and it \
             applies the change as it does"
                .into(),
        ));
    }
    if let Some(time) = change.apply_time
        && !bios.apply_times.contains(&time)
    {
        return Err(invalid(
            "apply_time",
            format!(
                "the BMC applies a change {}, not {time}",
                bios.apply_times
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    for (name, value) in &change.attributes {
        let field = format!("attributes.{name}");
        let Some(entry) = bios.registry.get(name) else {
            match bios.attributes.get(name) {
                None => {
                    return Err(invalid(
                        &field,
                        format!("the host's BIOS has no attribute `{name}`"),
                    ));
                }
                // No registry entry and no value: nothing says what it may hold.
                Some(None) => {
                    return Err(invalid(
                        &field,
                        format!(
                            "the BMC reports no value of `{name}` and publishes no registry \
                             entry for it: Podium cannot check a change of it"
                        ),
                    ));
                }
                // No registry entry: a value of the kind the BMC reports.
                Some(Some(now)) if std::mem::discriminant(now) != std::mem::discriminant(value) => {
                    return Err(invalid(
                        &field,
                        format!(
                            "expected {} as the BMC reports, found {}",
                            kind(now),
                            kind(value)
                        ),
                    ));
                }
                Some(Some(_)) => continue,
            }
        };
        if entry.attribute_type == BiosAttributeType::Password {
            return Err(password(field, name));
        }
        if entry.read_only {
            return Err(invalid(&field, format!("`{name}` is read-only")));
        }
        match (entry.attribute_type, value) {
            (BiosAttributeType::Enumeration, BiosValue::Text(v)) => {
                if !entry.allowed_values.is_empty() && !entry.allowed_values.contains(v) {
                    return Err(invalid(
                        &field,
                        format!(
                            "the value is not among those allowed: {}",
                            entry.allowed_values.join(", ")
                        ),
                    ));
                }
            }
            (BiosAttributeType::Text, BiosValue::Text(_)) => {
                text_check(&field, value, entry.min_length, entry.max_length)?;
            }
            (BiosAttributeType::Integer, BiosValue::Integer(i)) => {
                let low = entry.lower_bound.is_some_and(|b| *i < b);
                let high = entry.upper_bound.is_some_and(|b| *i > b);
                if low || high {
                    return Err(invalid(
                        &field,
                        format!(
                            "the value is out of bounds: from {} to {}",
                            entry.lower_bound.map_or("any".into(), |b| b.to_string()),
                            entry.upper_bound.map_or("any".into(), |b| b.to_string()),
                        ),
                    ));
                }
            }
            (BiosAttributeType::Boolean, BiosValue::Boolean(_)) => {}
            (declared, _) => {
                let expected = match declared {
                    BiosAttributeType::Integer => "an integer",
                    BiosAttributeType::Boolean => "true or false",
                    _ => "a string",
                };
                return Err(invalid(
                    &field,
                    format!(
                        "`{name}` is of type {declared}: expected {expected}, found {}",
                        kind(value)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn invalid(field: &str, message: String) -> Error {
    Error::Invalid {
        field: Some(field.to_owned()),
        message,
    }
}

fn password(field: String, name: &str) -> Error {
    Error::Invalid {
        field: Some(field),
        message: format!(
            "`{name}` is a password: Podium sets no BIOS password (an operation's request is \
             kept and shown)"
        ),
    }
}

/// What kind of value, in words (never the value: a refusal does not echo it).
fn kind(value: &BiosValue) -> &'static str {
    match value {
        BiosValue::Boolean(_) => "true or false",
        BiosValue::Integer(_) => "an integer",
        BiosValue::Text(_) => "a string",
    }
}

/// A text value: plain text (no control or invisible character, which a read of the BIOS would
/// refuse ever after), within the lengths (in characters) where given.
fn text_check(
    field: &str,
    value: &BiosValue,
    min: Option<u32>,
    max: Option<u32>,
) -> Result<(), Error> {
    let BiosValue::Text(text) = value else {
        return Ok(());
    };
    let chars = text.chars().count();
    let why = if text.len() > TEXT_MAX || !text.chars().all(podium_types::text::is_plain) {
        Some(format!(
            "a string of at most {TEXT_MAX} bytes with no control or invisible character"
        ))
    } else if min.is_some_and(|m| chars < m as usize) || max.is_some_and(|m| chars > m as usize) {
        Some(format!(
            "from {} to {} characters, found {chars}",
            min.unwrap_or(0),
            max.map_or("any".into(), |m| m.to_string())
        ))
    } else {
        None
    };
    match why {
        Some(why) => Err(invalid(field, format!("expected {why}"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use podium_types::{ApplyTime, BiosAttributeEntry};
    use std::collections::BTreeMap;

    fn bios() -> Bios {
        let mut attributes = BTreeMap::new();
        attributes.insert("QuietBoot".into(), Some(BiosValue::Boolean(true)));
        attributes.insert("AssetTag".into(), None);
        attributes.insert("AdminPwd".into(), None);
        attributes.insert("Label".into(), Some(BiosValue::Text("a".into())));
        let mut registry = BTreeMap::new();
        registry.insert(
            "QuietBoot".into(),
            BiosAttributeEntry {
                attribute_type: BiosAttributeType::Boolean,
                display_name: None,
                allowed_values: Vec::new(),
                read_only: false,
                reset_required: false,
                lower_bound: None,
                upper_bound: None,
                min_length: None,
                max_length: None,
            },
        );
        Bios {
            attributes,
            registry,
            pending: BTreeMap::new(),
            apply_times: Vec::new(),
        }
    }

    fn refused(change: serde_json::Value) -> (String, String) {
        let change: BiosChange = serde_json::from_value(change).unwrap();
        match change_check(&bios(), &change) {
            Err(Error::Invalid {
                field: Some(field),
                message,
            }) => (field, message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_change_the_registry_or_the_bmc_cannot_vouch_for_is_refused() {
        let (field, message) = refused(serde_json::json!({"attributes": {"AdminPwd": "s3cret-x"}}));
        assert_eq!(field, "attributes.AdminPwd");
        assert!(
            message.contains("password") && !message.contains("s3cret-x"),
            "{message}"
        );
        let (field, message) = refused(serde_json::json!({"attributes": {"AssetTag": "x"}}));
        assert_eq!(field, "attributes.AssetTag");
        assert!(message.contains("cannot check"), "{message}");
        let (field, message) = refused(serde_json::json!({"attributes": {"Label": 7}}));
        assert_eq!(field, "attributes.Label");
        assert_eq!(
            message,
            "expected a string as the BMC reports, found an integer"
        );
        let (field, message) = refused(serde_json::json!({"attributes": {"Bad\nName": true}}));
        assert_eq!(field, "attributes");
        assert!(message.contains("no attribute name"), "{message}");
        let (field, _) = refused(
            serde_json::json!({"attributes": {"QuietBoot": false}, "apply_time": "on_reset"}),
        );
        assert_eq!(field, "apply_time", "the BMC offers no apply time");
        let mut offered = bios();
        offered.apply_times = vec![ApplyTime::Immediate];
        let change: BiosChange = serde_json::from_value(
            serde_json::json!({"attributes": {"QuietBoot": false}, "apply_time": "immediate"}),
        )
        .unwrap();
        assert!(change_check(&offered, &change).is_ok());
    }

    #[test]
    fn a_change_no_read_of_the_bios_could_show_is_refused_before_the_bmc_is_asked() {
        for (change, field, says) in [
            // Invisible: the BMC would keep it, and every read after would be refused.
            (
                serde_json::json!({"attributes": {"Label": "a\u{200B}b"}}),
                "attributes.Label",
                "invisible",
            ),
            // A password by its name, whether the host has it or not.
            (
                serde_json::json!({"attributes": {"SetupPassword": "s3cret-x"}}),
                "attributes.SetupPassword",
                "password",
            ),
            (
                serde_json::json!({"attributes": {}}),
                "attributes",
                "at least one",
            ),
        ] {
            let change: BiosChange = serde_json::from_value(change).unwrap();
            match change_shape(&change) {
                Err(Error::Invalid {
                    field: Some(f),
                    message,
                }) => {
                    assert_eq!(f, field);
                    assert!(message.contains(says), "{message}");
                    assert!(!message.contains("s3cret-x"), "{message}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_refusal_of_a_value_never_quotes_it() {
        let mut bios = bios();
        bios.attributes
            .insert("Mode".into(), Some(BiosValue::Text("A".into())));
        bios.registry.insert(
            "Mode".into(),
            BiosAttributeEntry {
                attribute_type: BiosAttributeType::Enumeration,
                display_name: None,
                allowed_values: vec!["A".into(), "B".into()],
                read_only: false,
                reset_required: false,
                lower_bound: None,
                upper_bound: None,
                min_length: None,
                max_length: None,
            },
        );
        let change: BiosChange =
            serde_json::from_value(serde_json::json!({"attributes": {"Mode": "quoted-xyz"}}))
                .unwrap();
        let err = change_check(&bios, &change).unwrap_err().to_string();
        assert!(err.contains("A, B") && !err.contains("quoted-xyz"), "{err}");
    }

    #[test]
    fn a_value_of_no_kind_says_which_kinds_there_are() {
        for bad in [
            serde_json::json!(null),
            serde_json::json!(1.5),
            serde_json::json!(u64::MAX),
        ] {
            let err = serde_json::from_value::<BiosValue>(bad).unwrap_err();
            assert!(
                err.to_string().contains("a whole number within 64 bits"),
                "{err}"
            );
        }
    }
}
