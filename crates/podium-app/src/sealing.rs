//! Encryption of stored secrets (BMC credentials) with XChaCha20-Poly1305 under a key that lives
//! outside the database: `DATA_DIR/secret.key` (created on first start, mode 0600) or a key file
//! given in the configuration, which every Podium process on one PostgreSQL database must share.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::RngCore;

use podium_types::Secret;

/// Seals and opens secrets.
#[derive(Clone)]
pub(crate) struct Sealer {
    cipher: XChaCha20Poly1305,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer([redacted])")
    }
}

/// Why a sealed value could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("a stored secret cannot be decrypted with this key (was the secret key changed?)")]
pub(crate) struct OpenError;

const VERSION: &str = "v1:";

impl Sealer {
    /// Reads the key from `path`, creating a new random key there if the file does not exist.
    pub(crate) fn load_or_create(path: &Path) -> anyhow::Result<Sealer> {
        if !path.exists() {
            let mut key = [0u8; 32];
            rand::rng().fill_bytes(&mut key);
            write_private(path, &hex::encode(key))?;
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading the secret key {}: {e}", path.display()))?;
        let key = hex::decode(text.trim())
            .ok()
            .filter(|k| k.len() == 32)
            .ok_or_else(|| {
                anyhow::anyhow!("{} must hold 64 hex digits (a 256-bit key)", path.display())
            })?;
        Ok(Sealer::from_key(&key))
    }

    pub(crate) fn from_key(key: &[u8]) -> Sealer {
        Sealer {
            cipher: XChaCha20Poly1305::new_from_slice(key).expect("a 32-byte key"),
        }
    }

    pub(crate) fn seal(&self, plaintext: &Secret) -> String {
        let mut nonce = [0u8; 24];
        rand::rng().fill_bytes(&mut nonce);
        let sealed = self
            .cipher
            .encrypt(XNonce::from_slice(&nonce), plaintext.expose().as_bytes())
            .expect("encryption does not fail for in-memory buffers");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        format!("{VERSION}{}", STANDARD.encode(out))
    }

    pub(crate) fn open(&self, sealed: &str) -> Result<Secret, OpenError> {
        let bytes = sealed
            .strip_prefix(VERSION)
            .and_then(|b| STANDARD.decode(b).ok())
            .filter(|b| b.len() > 24)
            .ok_or(OpenError)?;
        let (nonce, ciphertext) = bytes.split_at(24);
        let plain = self
            .cipher
            .decrypt(XNonce::from_slice(nonce), ciphertext)
            .map_err(|_| OpenError)?;
        String::from_utf8(plain)
            .map(Secret::new)
            .map_err(|_| OpenError)
    }
}

pub(crate) fn write_private(path: &Path, content: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    file.write_all(content.as_bytes())?;
    file.write_all(b"\n")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_secrets_open_with_the_same_key_only() {
        let a = Sealer::from_key(&[7; 32]);
        let b = Sealer::from_key(&[8; 32]);
        let sealed = a.seal(&Secret::new("hunter2"));
        assert!(!sealed.contains("hunter2"));
        assert_ne!(
            sealed,
            a.seal(&Secret::new("hunter2")),
            "fresh nonce each time"
        );
        assert_eq!(a.open(&sealed).unwrap().expose(), "hunter2");
        assert!(b.open(&sealed).is_err());
        assert!(a.open("v1:garbage").is_err());
    }
}
