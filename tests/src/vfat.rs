//! Reads VFAT images back with tools independent of Podium's writer: `blkid` (util-linux) for
//! the file system type and label, mtools for the files (installed by
//! `scripts/install-deps.sh --tests`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, ensure};

/// `TYPE` and `LABEL` as blkid reads them from an image file.
pub async fn blkid(image: &Path) -> Result<BTreeMap<String, String>> {
    let output = tokio::process::Command::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(image)
        .output()
        .await
        .context("running blkid")?;
    ensure!(
        output.status.success(),
        "blkid found no file system: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect())
}

/// Every file of the image (path without the leading `/`) with its bytes, copied out with
/// mtools into `into`.
pub async fn files(image: &Path, into: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let output = tokio::process::Command::new("mcopy")
        .env("MTOOLS_SKIP_CHECK", "1")
        .args(["-s", "-n", "-i"])
        .arg(image)
        .arg("::/")
        .arg(into)
        .output()
        .await
        .context("running mcopy (mtools)")?;
    ensure!(
        output.status.success(),
        "mcopy could not read the image: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut out = BTreeMap::new();
    walk(into, into, &mut out)?;
    Ok(out)
}

fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) -> Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(base, &path, out)?;
        } else {
            let name = path.strip_prefix(base)?.to_string_lossy().into_owned();
            out.insert(name, std::fs::read(&path)?);
        }
    }
    Ok(())
}

/// The files of the config drive behind `url` (a config drive URL Podium gave), downloaded
/// with no token as a BMC does; panics, naming what, when the download or the image fails.
pub async fn drive_files(client: &crate::Client, url: &str) -> BTreeMap<String, Vec<u8>> {
    let path = &url[url
        .find("/v1/")
        .unwrap_or_else(|| panic!("not a Podium URL: {url}"))..];
    let (status, _, bytes) = client.get_bytes(path).await;
    assert_eq!(status, reqwest::StatusCode::OK, "downloading {path}");
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("drive.img");
    std::fs::write(&image, &bytes).unwrap();
    files(&image, dir.path())
        .await
        .unwrap_or_else(|e| panic!("the drive at {path}: {e:#}"))
}
