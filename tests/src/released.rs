//! The released plugin contracts' WIT, by digest: what `tests/all/contract_0_1_0.rs` and
//! `contract_0_2_0.rs` pin, so that a released contract is never edited.

use std::path::Path;

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
