//! Builds workspace crates as `wasm32-wasip2` components from a build script, so the normal
//! `cargo build` of the host (and of the tests) also builds the plugins it bundles, with no
//! manual step.
//!
//! The nested cargo uses its own target directory (`target/wasm`) so it never waits for the lock
//! the outer cargo holds, and it always builds in release: a debug component is about 200 times
//! larger and much slower.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A built component: the package it came from and the path of its `.wasm`.
#[derive(Debug)]
pub struct Built {
    pub package: String,
    pub path: PathBuf,
}

/// Builds `packages` (cargo package names) of the workspace at `workspace_root` and returns the
/// paths of their components. Panics with cargo's output on failure, as build scripts do.
pub fn build(workspace_root: &Path, packages: &[&str]) -> Vec<Built> {
    let target_dir = env::var_os("PODIUM_WASM_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root.join("target").join("wasm"));
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace_root)
        .arg("build")
        .arg("--release")
        .arg("--locked")
        .arg("--target")
        .arg("wasm32-wasip2")
        .arg("--target-dir")
        .arg(&target_dir);
    for package in packages {
        command.arg("-p").arg(package);
    }
    // The outer cargo's settings are for the host target; none of them apply here.
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_")
            && key != "CARGO_HOME"
            && key != "CARGO_NET_OFFLINE"
            && !key.starts_with("CARGO_REGISTRIES_")
            || key == "RUSTFLAGS"
            || key == "RUSTC_WRAPPER"
            || key == "RUSTC_WORKSPACE_WRAPPER"
            || key == "RUSTDOCFLAGS"
            || key == "RUSTC"
        {
            command.env_remove(key.as_ref());
        }
    }
    let output = command
        .output()
        .expect("running cargo to build the wasm components");
    if !output.status.success() {
        panic!(
            "building {packages:?} for wasm32-wasip2 failed (is the target installed? `rustup target add wasm32-wasip2`):\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let out_dir = target_dir.join("wasm32-wasip2").join("release");
    packages
        .iter()
        .map(|package| {
            let path = out_dir.join(format!("{}.wasm", package.replace('-', "_")));
            assert!(path.exists(), "{} was not produced", path.display());
            Built {
                package: (*package).to_owned(),
                path,
            }
        })
        .collect()
}

/// Tells cargo to re-run the build script when any source of `dirs` (relative to the workspace
/// root) or the WIT changes.
pub fn rerun_if_changed(workspace_root: &Path, dirs: &[&str]) {
    for dir in dirs.iter().chain(&["wit", "Cargo.lock"]) {
        println!(
            "cargo:rerun-if-changed={}",
            workspace_root.join(dir).display()
        );
    }
}

/// The whole job of a build script whose crate sits one folder below the workspace root: rerun
/// when anything under `watch` changes, build each `(package, variable)` of `components`, and
/// set `variable` to the path of its `.wasm` for the crate being built.
pub fn build_for_crate(watch: &[&str], components: &[(&str, &str)]) {
    let manifest_dir = env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest_dir)
        .parent()
        .expect("the crate's folder has a parent");
    rerun_if_changed(root, watch);
    let packages: Vec<&str> = components.iter().map(|(p, _)| *p).collect();
    for (built, (_, var)) in build(root, &packages).iter().zip(components) {
        println!("cargo:rustc-env={var}={}", built.path.display());
    }
}
