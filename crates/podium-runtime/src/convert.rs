//! The WIT edge: the model's types (`podium_types`) to and from the bindings' own.

use super::bindings::wit_driver as wd;
use podium_types::{
    BootMode, BootPersistence, BootSettings, BootTarget, MediaType, PowerAction, PowerState,
};

impl From<wd::PowerState> for PowerState {
    fn from(p: wd::PowerState) -> PowerState {
        match p {
            wd::PowerState::On => PowerState::On,
            wd::PowerState::Off => PowerState::Off,
            wd::PowerState::PoweringOn => PowerState::PoweringOn,
            wd::PowerState::PoweringOff => PowerState::PoweringOff,
            wd::PowerState::Unknown => PowerState::Unknown,
        }
    }
}

impl From<PowerAction> for wd::PowerAction {
    fn from(a: PowerAction) -> wd::PowerAction {
        match a {
            PowerAction::On => wd::PowerAction::On,
            PowerAction::Off => wd::PowerAction::Off,
            PowerAction::GracefulShutdown => wd::PowerAction::GracefulShutdown,
            PowerAction::ForceOff => wd::PowerAction::ForceOff,
            PowerAction::GracefulRestart => wd::PowerAction::GracefulRestart,
            PowerAction::ForceRestart => wd::PowerAction::ForceRestart,
        }
    }
}

impl From<wd::MediaType> for MediaType {
    fn from(m: wd::MediaType) -> MediaType {
        match m {
            wd::MediaType::Cd => MediaType::Cd,
            wd::MediaType::Dvd => MediaType::Dvd,
            wd::MediaType::Floppy => MediaType::Floppy,
            wd::MediaType::Usb => MediaType::Usb,
        }
    }
}

impl From<MediaType> for wd::MediaType {
    fn from(m: MediaType) -> wd::MediaType {
        match m {
            MediaType::Cd => wd::MediaType::Cd,
            MediaType::Dvd => wd::MediaType::Dvd,
            MediaType::Floppy => wd::MediaType::Floppy,
            MediaType::Usb => wd::MediaType::Usb,
        }
    }
}

impl From<wd::BootSettings> for BootSettings {
    fn from(b: wd::BootSettings) -> BootSettings {
        BootSettings {
            target: match b.target {
                wd::BootTarget::None => BootTarget::None,
                wd::BootTarget::Pxe => BootTarget::Pxe,
                wd::BootTarget::Cd => BootTarget::Cd,
                wd::BootTarget::Hdd => BootTarget::Hdd,
                wd::BootTarget::UefiHttp => BootTarget::UefiHttp,
                wd::BootTarget::Usb => BootTarget::Usb,
                wd::BootTarget::BiosSetup => BootTarget::BiosSetup,
            },
            persistence: match b.persistence {
                wd::BootPersistence::Disabled => BootPersistence::Disabled,
                wd::BootPersistence::Once => BootPersistence::Once,
                wd::BootPersistence::Continuous => BootPersistence::Continuous,
            },
            mode: b.mode.map(|m| match m {
                wd::BootMode::Uefi => BootMode::Uefi,
                wd::BootMode::Legacy => BootMode::Legacy,
            }),
        }
    }
}

impl From<BootSettings> for wd::BootSettings {
    fn from(b: BootSettings) -> wd::BootSettings {
        wd::BootSettings {
            target: match b.target {
                BootTarget::None => wd::BootTarget::None,
                BootTarget::Pxe => wd::BootTarget::Pxe,
                BootTarget::Cd => wd::BootTarget::Cd,
                BootTarget::Hdd => wd::BootTarget::Hdd,
                BootTarget::UefiHttp => wd::BootTarget::UefiHttp,
                BootTarget::Usb => wd::BootTarget::Usb,
                BootTarget::BiosSetup => wd::BootTarget::BiosSetup,
            },
            persistence: match b.persistence {
                BootPersistence::Disabled => wd::BootPersistence::Disabled,
                BootPersistence::Once => wd::BootPersistence::Once,
                BootPersistence::Continuous => wd::BootPersistence::Continuous,
            },
            mode: b.mode.map(|m| match m {
                BootMode::Uefi => wd::BootMode::Uefi,
                BootMode::Legacy => wd::BootMode::Legacy,
            }),
        }
    }
}
