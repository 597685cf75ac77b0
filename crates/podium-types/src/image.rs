//! What a claimed host runs: its image's format and the kind of its checksum.

use crate::names::names;

names! {
    /// How an image is put on a host.
    pub enum ImageFormat ("an image format") {
        /// A disk image, written byte for byte.
        Raw => "raw",
        /// A QEMU copy-on-write disk image.
        Qcow2 => "qcow2",
        /// An ISO the host boots from virtual media, installing nothing.
        LiveIso => "live-iso",
    }
}

names! {
    /// The hash an image's checksum is.
    pub enum ChecksumType ("a checksum type") {
        Md5 => "md5",
        Sha256 => "sha256",
        Sha512 => "sha512",
    }
}

names! {
    /// What cleaning a host's disks between tenants erases (`docs/deploy.md`).
    #[derive(Default)]
    pub enum Cleaning ("a cleaning") {
        /// Every disk's partition tables and file system signatures (IPA's
        /// `erase_devices_metadata`): seconds. The default.
        #[default]
        Metadata => "metadata",
        /// Every byte of every disk (IPA's `erase_devices`: the disk's own secure erase where it
        /// has one, else overwritten with random data and then zeros): hours on large disks.
        Full => "full",
        /// Nothing: a tenant's data stays on the disks for the next tenant. The admin's
        /// explicit choice (Metal3's `automatedCleaningMode: disabled`), for a site that
        /// cleans by other means or trusts all its tenants.
        Disabled => "disabled",
    }
}

/// What a release of a pod manager's host erases now, as its settings and its deploy ramdisk
/// allow, and why: shown with the pod manager, so that an admin knows before granting it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, utoipa::ToSchema)]
pub struct CleaningInEffect {
    /// `metadata` or `full`; `null`: nothing is cleaned (see `why`).
    pub erases: Option<Cleaning>,
    pub why: String,
}

impl CleaningInEffect {
    /// The cleaning `deploy` asks for, on a site with a deploy ramdisk or without one.
    pub fn of(deploy: &DeploySettings, has_ramdisk: bool) -> CleaningInEffect {
        match (deploy.cleaning, has_ramdisk) {
            (Cleaning::Disabled, _) => CleaningInEffect {
                erases: None,
                why: "cleaning is disabled (`deploy.cleaning`): a tenant's data stays on the \
                      disks for the next tenant"
                    .into(),
            },
            (cleaning, false) => CleaningInEffect {
                erases: None,
                why: format!(
                    "no deploy ramdisk (`preprovisioning_image`) to clean with: a release of a \
                     host whose disks may hold a tenant's data fails and holds the host in \
                     `error`; give the site a ramdisk for its {} cleaning, or set \
                     `deploy.cleaning` to `disabled`",
                    cleaning.as_str()
                ),
            },
            (cleaning, true) => CleaningInEffect {
                erases: Some(cleaning),
                why: format!(
                    "a release of a host whose disks may hold a tenant's data (its provisioning \
                     began, or its tenant booted media of its own) boots the deploy ramdisk and \
                     erases {} before the host is available again; a cleaning that fails holds \
                     the host in `error`",
                    match cleaning {
                        Cleaning::Full => "every byte of every disk",
                        _ => "every disk's partition tables and file system signatures",
                    }
                ),
            },
        }
    }
}

/// A cleaning of a host's disks between tenants, as the host keeps its last one.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, utoipa::ToSchema)]
pub struct CleaningRecord {
    /// When it ended.
    pub at: crate::Timestamp,
    /// What it erased.
    pub cleaning: Cleaning,
    /// The claim whose data it erased.
    pub claim: Option<crate::ClaimId>,
    pub succeeded: bool,
    /// What failed, where it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// How a pod manager's hosts take disk images (`raw`, `qcow2`) and are cleaned after them
/// (`docs/deploy.md`). Every field absent is its default.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Deserialize,
    serde::Serialize,
    utoipa::ToSchema,
)]
#[serde(deny_unknown_fields)]
pub struct DeploySettings {
    /// What a release of a host whose disks may hold a tenant's data erases before the host is
    /// free again (`metadata`, `full`; `disabled`: nothing). Default: `metadata`.
    #[serde(default)]
    pub cleaning: Cleaning,
    /// Whether claims may give an md5 checksum (weak: anyone can make an image with the same
    /// md5). Default: `false`, md5 refused; sha256 and sha512 are always taken.
    #[serde(default)]
    pub allow_md5: bool,
}
