//! Operations: the durable record of work Podium does on a machine or a site, by kind, with the
//! request each kind carries.

use std::fmt;
use std::str::FromStr;

use crate::hardware::{BootSettings, MediaAction, PowerAction};

macro_rules! names {
    ($(#[$meta:meta])* $vis:vis enum $name:ident ($what:literal) { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl FromStr for $name {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<$name, UnknownName> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownName { what: $what, name: s.to_owned() }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// A name that is not one of a type's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    pub what: &'static str,
    pub name: String,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not {}", self.name.escape_debug(), self.what)
    }
}

impl std::error::Error for UnknownName {}

names! {
    /// What an operation does.
    pub enum OperationKind ("an operation kind") {
        Register => "register",
        Inspect => "inspect",
        Sync => "sync",
        Power => "power",
        Boot => "boot",
        Media => "media",
        Provision => "provision",
        Deprovision => "deprovision",
    }
}

impl OperationKind {
    /// The kinds an admin's host action queues (one of a host's at a time, in order).
    pub fn is_host_action(self) -> bool {
        matches!(
            self,
            OperationKind::Power | OperationKind::Boot | OperationKind::Media
        )
    }
}

/// What an operation was asked to do: its kind and what that kind needs.
#[derive(Clone, Debug, PartialEq)]
pub enum OperationRequest {
    /// Read the system of a host with its own BMC and record it.
    Register,
    /// Read a host's inventory (and prepare its preprovisioning).
    Inspect,
    /// Read every system of a pod manager.
    Sync,
    Power(PowerAction),
    Boot(BootSettings),
    Media(MediaAction),
    /// Boot a bound claim's host from its image; `image` is the claim's image as it was asked
    /// for (recorded for whoever reads the operation; the provisioning reads the claim).
    Provision {
        image: serde_json::Value,
    },
    /// Return a released claim's host to the pool.
    Deprovision,
}

impl OperationRequest {
    pub fn kind(&self) -> OperationKind {
        match self {
            OperationRequest::Register => OperationKind::Register,
            OperationRequest::Inspect => OperationKind::Inspect,
            OperationRequest::Sync => OperationKind::Sync,
            OperationRequest::Power(_) => OperationKind::Power,
            OperationRequest::Boot(_) => OperationKind::Boot,
            OperationRequest::Media(_) => OperationKind::Media,
            OperationRequest::Provision { .. } => OperationKind::Provision,
            OperationRequest::Deprovision => OperationKind::Deprovision,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_back_from_their_names() {
        for kind in OperationKind::ALL {
            assert_eq!(kind.as_str().parse::<OperationKind>(), Ok(*kind));
        }
        let err = "reboot".parse::<OperationKind>().unwrap_err();
        assert_eq!(err.to_string(), "`reboot` is not an operation kind");
    }
}
