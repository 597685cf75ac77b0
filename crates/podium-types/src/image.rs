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
