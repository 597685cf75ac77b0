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
    /// What a release of a disk-deployed host erases before the host is free again. Default:
    /// `metadata`.
    #[serde(default)]
    pub cleaning: Cleaning,
    /// Whether claims may give an md5 checksum (weak: anyone can make an image with the same
    /// md5). Default: `false`, md5 refused; sha256 and sha512 are always taken.
    #[serde(default)]
    pub allow_md5: bool,
}
