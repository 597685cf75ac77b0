//! Names admins give pod managers and pools, owners of addresses, and labels of hosts and
//! selectors of them in grants and claims, checked with the field at fault.

use std::collections::BTreeMap;

use crate::error::Error;

const LABEL_KEY_MAX: usize = 63;
const LABEL_VALUE_MAX: usize = 63;
const LABELS_MAX: usize = 64;

/// Checks a set of labels (or a selector of them); `field` names it in errors.
pub(crate) fn validate_labels(field: &str, labels: &BTreeMap<String, String>) -> Result<(), Error> {
    if labels.len() > LABELS_MAX {
        return Err(Error::invalid(
            "labels",
            format!("at most {LABELS_MAX} labels"),
        ));
    }
    for (k, v) in labels {
        let key_ok = !k.is_empty()
            && k.len() <= LABEL_KEY_MAX
            && k.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._/-".contains(&b));
        if !key_ok {
            return Err(Error::invalid(
                format!("{field}.{k}"),
                format!(
                    "a label key is 1 to {LABEL_KEY_MAX} characters of A-Z, a-z, 0-9, `.`, `_`, `/` and `-`"
                ),
            ));
        }
        if v.len() > LABEL_VALUE_MAX || v.chars().any(char::is_control) {
            return Err(Error::invalid(
                format!("{field}.{k}"),
                format!("a label value is at most {LABEL_VALUE_MAX} printable characters"),
            ));
        }
    }
    Ok(())
}

const NAME_MAX: usize = 63;

/// Checks the name of a pod manager or a pool.
pub(crate) fn validate_name(name: &str) -> Result<(), Error> {
    validate_name_in("name", name)
}

/// Checks a name given in `field` (a pool's, a spread group's), as `validate_name` does.
pub(crate) fn validate_name_in(field: &str, name: &str) -> Result<(), Error> {
    if name.is_empty()
        || name.len() > NAME_MAX
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    {
        return Err(Error::invalid(
            field,
            format!("must be 1 to {NAME_MAX} characters of A-Z, a-z, 0-9, `.`, `_` and `-`"),
        ));
    }
    Ok(())
}

/// Checks the text of an owner (`podium_types::Owner`), naming `field` if it is none.
pub(crate) fn validate_owner_text(field: &str, owner: &str) -> Result<(), Error> {
    podium_types::Owner::check(owner).map_err(|e| Error::invalid(field, e.to_string()))
}
