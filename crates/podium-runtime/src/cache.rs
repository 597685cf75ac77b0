//! The on-disk cache of compiled components, keyed by the sha256 of the wasm and the engine's
//! compatibility hash, so a restart (or a second process on the same data directory) does not
//! compile again.
//!
//! Only artefacts this host compiled itself are ever deserialized: clients upload `.wasm`, never
//! compiled code.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::PathBuf;

use wasmtime::component::Component;

use super::Runtime;
use super::detect::LoadError;

/// Loads the compiled form of `bytes` from the cache, or compiles it and stores the result.
/// A cache that cannot be read or written is logged and bypassed, never fatal.
pub(super) fn compile(
    runtime: &Runtime,
    sha256: &str,
    bytes: &[u8],
) -> Result<Component, LoadError> {
    let engine = runtime.engine();
    let Some(path) = cache_path(runtime, sha256) else {
        return super::compile_uncached(engine, bytes).map_err(LoadError::compile);
    };
    if path.exists() {
        match load(runtime, &path) {
            Ok(component) => return Ok(component),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "discarding unreadable compiled component")
            }
        }
    }
    let component = super::compile_uncached(engine, bytes).map_err(LoadError::compile)?;
    if let Err(e) = store(&path, &component) {
        tracing::warn!(path = %path.display(), error = %e, "could not cache compiled component");
    }
    Ok(component)
}

fn cache_path(runtime: &Runtime, sha256: &str) -> Option<PathBuf> {
    let dir = runtime.config().cache_dir.as_ref()?;
    let mut hasher = DefaultHasher::new();
    runtime
        .engine()
        .precompile_compatibility_hash()
        .hash(&mut hasher);
    Some(dir.join(format!("{sha256}-{:016x}.cwasm", hasher.finish())))
}

#[allow(unsafe_code)]
fn load(runtime: &Runtime, path: &std::path::Path) -> wasmtime::Result<Component> {
    // SAFETY: `deserialize_file` trusts the file to be an artefact that this engine configuration
    // produced. Files in the cache directory are written only by `store` below, from
    // `Component::serialize` of a component this process compiled, under a name that carries the
    // engine's compatibility hash; wasmtime itself checks the header and version again. The data
    // directory belongs to the Podium process (documented in ARCHITECTURE.md); nothing a client
    // sends is ever written there as compiled code.
    unsafe { Component::deserialize_file(runtime.engine(), path) }
}

fn store(path: &std::path::Path, component: &Component) -> anyhow::Result<()> {
    let serialized = component.serialize().map_err(|e| anyhow::anyhow!("{e}"))?;
    let dir = path.parent().expect("cache path has a parent");
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&serialized)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)?;
    Ok(())
}
