//! Builds the misbehaving test guests (`tests/guests/*`) as components and exports their paths
//! as `GUEST_*` environment variables for the tests.

use std::path::Path;

const GUESTS: &[(&str, &str)] = &[
    ("guest-faulty", "GUEST_FAULTY"),
    ("guest-wrong-version", "GUEST_WRONG_VERSION"),
    ("guest-missing-export", "GUEST_MISSING_EXPORT"),
    ("guest-other-world", "GUEST_OTHER_WORLD"),
];

fn main() {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest_dir)
        .parent()
        .expect("tests/ has a parent");
    wasm_build::rerun_if_changed(root, &["tests/guests"]);
    // The platform the tests run on, for `cargo metadata --filter-platform` (tidy.rs).
    let target = std::env::var("TARGET").expect("TARGET");
    println!("cargo:rustc-env=PODIUM_TESTS_TARGET={target}");
    let packages: Vec<&str> = GUESTS.iter().map(|(p, _)| *p).collect();
    for (built, (_, var)) in wasm_build::build(root, &packages).iter().zip(GUESTS) {
        println!("cargo:rustc-env={var}={}", built.path.display());
    }
}
