//! Operations: the durable record of work Podium does on a machine or a site, by kind, with the
//! request each kind carries.

use crate::bios::BiosAction;
use crate::firmware::FirmwareUpdate;
use crate::hardware::{BootSettings, MediaAction, PowerAction};
use crate::names::names;

names! {
    /// What an operation does.
    pub enum OperationKind ("an operation kind") {
        Register => "register",
        Inspect => "inspect",
        Sync => "sync",
        Power => "power",
        Boot => "boot",
        Media => "media",
        Bios => "bios",
        SecureBoot => "secure_boot",
        FirmwareUpdate => "firmware_update",
        Provision => "provision",
        Deprovision => "deprovision",
    }
}

names! {
    /// Where an operation is: queued (waiting, or waiting for a retry), running under a lease,
    /// or ended.
    pub enum OperationStatus ("an operation status") {
        Queued => "queued",
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
    }
}

impl OperationKind {
    /// The kinds an admin's host action queues (one of a host's at a time, in order).
    pub fn is_host_action(self) -> bool {
        matches!(
            self,
            OperationKind::Power
                | OperationKind::Boot
                | OperationKind::Media
                | OperationKind::Bios
                | OperationKind::SecureBoot
                | OperationKind::FirmwareUpdate
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
    /// Change a host's BIOS attributes, or reset them to their defaults.
    Bios(BiosAction),
    /// Turn a host's secure boot on or off.
    SecureBoot {
        enabled: bool,
    },
    /// Update a host's firmware from an image; the BMC runs it as a task the operation follows.
    FirmwareUpdate(FirmwareUpdate),
    /// Boot a bound claim's host from its image; `image` is the claim's image as it was asked
    /// for (recorded for whoever reads the operation; the provisioning reads the claim), absent
    /// where an early release recorded none.
    Provision {
        image: Option<Box<crate::requests::ImageParams>>,
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
            OperationRequest::Bios(_) => OperationKind::Bios,
            OperationRequest::SecureBoot { .. } => OperationKind::SecureBoot,
            OperationRequest::FirmwareUpdate(_) => OperationKind::FirmwareUpdate,
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
        assert_eq!(
            err.to_string(),
            "`reboot` is not an operation kind (one of register, inspect, sync, power, boot, \
             media, bios, secure_boot, firmware_update, provision, deprovision)"
        );
    }
}
