//! The bindings of `podium:plugin@0.3.0`'s `hardware-driver` world: a driver whose calls are
//! exchanges of steps (`wit/podium-plugin@0.3.0/driver.wit`; 0.2.0's with chassis power).
//!
//! Its interfaces of types only (`types`, `http`, `hardware`) are 0.1.0's Rust types
//! (`podium-plugin-bindings`): the same records under another package version, so the SDK and
//! a driver name one `System` whichever contract the bindings came from. Its imports (`log`,
//! `config`) are its own.

wit_bindgen::generate!({
    path: "../../../wit/podium-plugin@0.3.0",
    world: "hardware-driver",
    export_macro_name: "export_exchange_driver",
    pub_export_macro: true,
    additional_derives: [PartialEq],
    with: {
        "podium:plugin/types@0.3.0": podium_plugin_bindings::podium::plugin::types,
        "podium:plugin/http@0.3.0": podium_plugin_bindings::podium::plugin::http,
        "podium:plugin/hardware@0.3.0": podium_plugin_bindings::exports::podium::plugin::driver,
    },
});
