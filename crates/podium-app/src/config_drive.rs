//! Config drive images: a VFAT file system labelled `config-2` holding
//! `openstack/latest/{meta_data.json,network_data.json,user_data}`, as cloud-init's ConfigDrive
//! source (and Ironic's ramdisk, and Glean) read it.
//!
//! Written in memory with `fatfs`, no external program. The same documents always give the same
//! bytes (fixed volume id, timestamps at the FAT epoch), so an image can be rebuilt on every
//! download and still match the sha256 announced when it was made.

use std::io::{Cursor, Write};

use sha2::{Digest, Sha256};

/// A 1.44 MB floppy's size: what BMCs that take floppy images expect, and room enough for the
/// largest documents Podium writes (two of 256 KiB and 64 KiB of user data).
const FLOPPY_BYTES: usize = 1_474_560;
/// `config-2`, padded to the 11 bytes of a FAT label.
const LABEL: [u8; 11] = *b"config-2   ";
/// Any fixed value: the image must not depend on when it was built.
const VOLUME_ID: u32 = 0xC0DE_0002;

/// Every file's timestamps: a fixed, valid date (the FAT epoch, 1980-01-01), so the image does not
/// depend on when it was built.
#[derive(Debug)]
struct FatEpoch;

impl fatfs::TimeProvider for FatEpoch {
    fn get_current_date(&self) -> fatfs::Date {
        fatfs::Date {
            year: 1980,
            month: 1,
            day: 1,
        }
    }

    fn get_current_date_time(&self) -> fatfs::DateTime {
        fatfs::DateTime {
            date: self.get_current_date(),
            time: fatfs::Time {
                hour: 0,
                min: 0,
                sec: 0,
                millis: 0,
            },
        }
    }
}

static FAT_EPOCH: FatEpoch = FatEpoch;

/// What goes on the drive.
#[derive(Clone, Debug)]
pub(crate) struct Contents<'a> {
    pub meta_data: &'a [u8],
    pub network_data: &'a [u8],
    pub user_data: Option<&'a [u8]>,
    /// The deploy agent's settings, written as `etc/ironic-python-agent.d/podium.conf`: where
    /// the Ironic Python Agent reads them from a `config-2` drive on virtual media.
    pub agent_config: Option<&'a [u8]>,
}

/// A built image with its digest.
#[derive(Clone, Debug)]
pub(crate) struct Image {
    pub bytes: Vec<u8>,
    pub sha256: String,
}

/// Builds the image. Fails only if the documents do not fit a floppy, which the size limits on
/// them rule out.
pub(crate) fn build(contents: &Contents<'_>) -> std::io::Result<Image> {
    let needed = contents.meta_data.len()
        + contents.network_data.len()
        + contents.user_data.map_or(0, <[u8]>::len)
        + contents.agent_config.map_or(0, <[u8]>::len);
    if needed > FLOPPY_BYTES - (64 << 10) {
        return Err(std::io::Error::other(format!(
            "{needed} bytes of documents do not fit a config drive"
        )));
    }
    let mut disk = Cursor::new(vec![0u8; FLOPPY_BYTES]);
    fatfs::format_volume(
        &mut disk,
        fatfs::FormatVolumeOptions::new()
            .volume_label(LABEL)
            .volume_id(VOLUME_ID)
            .fat_type(fatfs::FatType::Fat12),
    )?;
    disk.set_position(0);
    {
        let fs =
            fatfs::FileSystem::new(&mut disk, fatfs::FsOptions::new().time_provider(&FAT_EPOCH))?;
        let latest = fs
            .root_dir()
            .create_dir("openstack")?
            .create_dir("latest")?;
        let mut files = vec![
            ("meta_data.json", contents.meta_data),
            ("network_data.json", contents.network_data),
        ];
        if let Some(user_data) = contents.user_data {
            files.push(("user_data", user_data));
        }
        for (name, bytes) in files {
            let mut file = latest.create_file(name)?;
            file.truncate()?;
            file.write_all(bytes)?;
            file.flush()?;
        }
        drop(latest);
        if let Some(config) = contents.agent_config {
            let mut file = fs
                .root_dir()
                .create_dir("etc")?
                .create_dir("ironic-python-agent.d")?
                .create_file("podium.conf")?;
            file.truncate()?;
            file.write_all(config)?;
            file.flush()?;
        }
        fs.unmount()?;
    }
    let bytes = disk.into_inner();
    let sha256 = hex::encode(Sha256::digest(&bytes));
    Ok(Image { bytes, sha256 })
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn read(image: &[u8], path: &[&str]) -> Vec<u8> {
        let fs = fatfs::FileSystem::new(Cursor::new(image.to_vec()), fatfs::FsOptions::new())
            .expect("the image mounts");
        let mut dir = fs.root_dir();
        for part in &path[..path.len() - 1] {
            dir = dir.open_dir(part).expect("directory exists");
        }
        let mut out = Vec::new();
        dir.open_file(path[path.len() - 1])
            .expect("file exists")
            .read_to_end(&mut out)
            .expect("file reads");
        out
    }

    #[test]
    fn the_same_documents_give_the_same_bytes_and_read_back() {
        let contents = Contents {
            meta_data: br#"{"uuid":"u"}"#,
            network_data: br#"{"links":[]}"#,
            user_data: Some(&[0, 159, 146, 150, 255]),
            agent_config: Some(b"[DEFAULT]\napi_url = http://198.51.100.1:8080/agent\n"),
        };
        let a = build(&contents).unwrap();
        let b = build(&contents).unwrap();
        assert_eq!(a.sha256, b.sha256);
        assert_eq!(a.bytes.len(), FLOPPY_BYTES);
        let fs =
            fatfs::FileSystem::new(Cursor::new(a.bytes.clone()), fatfs::FsOptions::new()).unwrap();
        assert_eq!(fs.volume_label(), "config-2");
        // In the root directory too: blkid's `LABEL` (glean's question) reads it there.
        assert_eq!(
            fs.read_volume_label_from_root_dir().unwrap().as_deref(),
            Some("config-2")
        );
        drop(fs);
        assert_eq!(
            read(&a.bytes, &["openstack", "latest", "user_data"]),
            [0, 159, 146, 150, 255]
        );
        assert_eq!(
            read(&a.bytes, &["openstack", "latest", "meta_data.json"]),
            br#"{"uuid":"u"}"#
        );
        let other = build(&Contents {
            user_data: None,
            ..contents
        })
        .unwrap();
        assert_ne!(other.sha256, a.sha256);
        assert_eq!(
            read(&a.bytes, &["etc", "ironic-python-agent.d", "podium.conf"]),
            b"[DEFAULT]\napi_url = http://198.51.100.1:8080/agent\n"
        );
    }
}
