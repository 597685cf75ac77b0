//! `other-world`: a component that exports none of Podium's worlds (its own `example:other` world
//! in `wit/`), for the host's test that such a component is refused as a plugin.

wit_bindgen::generate!({
    path: "wit",
    world: "other",
});

/// The exported component; only `export_glue` names it, hence unused in native builds.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Component;

impl Guest for Component {
    fn greet() -> String {
        "hello from a component that is not a Podium plugin".into()
    }
}

/// `export!` expands to the exports' C-ABI shims (`export_name`, raw pointers), which are `unsafe`;
/// the workspace denies `unsafe_code`, so the lint is allowed for that expansion alone. Native
/// builds (unit tests, clippy) leave it out: export names like `podium:plugin/...#info` are not
/// valid symbols for a native linker.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod export_glue {
    use super::Component;
    super::export!(Component with_types_in super);
}
