//! The released plugin contracts' WIT, by digest: what `tests/all/contract_0_1_0.rs` and
//! `contract_0_2_0.rs` pin, so that a released contract is never edited.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The digest of the `.wit` files of `dir` (each file's name, a NUL, its bytes, in name order),
/// and their names and contents.
pub fn wit_digest(dir: &Path) -> (String, Vec<(String, Vec<u8>)>) {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wit"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    let mut digest = Sha256::new();
    for (name, bytes) in &files {
        digest.update(name.as_bytes());
        digest.update([0]);
        digest.update(bytes);
    }
    (hex::encode(digest.finalize()), files)
}

/// Fails unless `wit/podium-plugin@{version}` has the digest it was released with, and the
/// contract's fixture guest (`tests/guests/contract-{version}/wit`) carries the same files.
pub fn assert_frozen(version: &str, released: &str) {
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_owned();
    let (digest, files) = wit_digest(&root.join(format!("wit/podium-plugin@{version}")));
    assert_eq!(
        digest, released,
        "wit/podium-plugin@{version} changed after its release: put the change in a new version"
    );
    let (_, fixture) = wit_digest(&root.join(format!("tests/guests/contract-{version}/wit")));
    assert_eq!(
        fixture, files,
        "the fixture's copy of the released WIT differs from it"
    );
}
