//! Builds the misbehaving test guests (`tests/guests/*`) as components and exports their paths
//! as `GUEST_*` environment variables for the tests.

const GUESTS: &[(&str, &str)] = &[
    ("guest-faulty", "GUEST_FAULTY"),
    ("guest-faulty-exchange", "GUEST_FAULTY_EXCHANGE"),
    ("guest-wrong-version", "GUEST_WRONG_VERSION"),
    ("guest-missing-export", "GUEST_MISSING_EXPORT"),
    ("guest-other-world", "GUEST_OTHER_WORLD"),
    ("guest-contract-0-1-0", "GUEST_CONTRACT_0_1_0"),
    ("guest-contract-0-2-0", "GUEST_CONTRACT_0_2_0"),
];

fn main() {
    // The platform the tests run on, for `cargo metadata --filter-platform` (tidy.rs).
    let target = std::env::var("TARGET").expect("TARGET");
    println!("cargo:rustc-env=PODIUM_TESTS_TARGET={target}");
    wasm_build::build_for_crate(&["tests/guests"], GUESTS);
}
