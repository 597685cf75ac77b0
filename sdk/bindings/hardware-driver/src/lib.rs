//! The bindings of `podium:plugin@0.1.0`'s `hardware-driver` world, and of the interfaces every
//! world shares (`types`, `log`, `config`): the other worlds' bindings use these.
//!
//! One crate per world: each world exports the `plugin` interface, and the macro wit-bindgen
//! writes for an exported interface is named after the interface, so two worlds in one crate
//! would define it twice. The export macro carries the world's exports (the custom section of
//! this crate describes its imports only), so a component exports the one world its plugin
//! names in `podium_plugin::export!`.

wit_bindgen::generate!({
    path: "../../../wit/podium-plugin@0.1.0",
    world: "hardware-driver",
    export_macro_name: "export_hardware_driver",
    pub_export_macro: true,
    additional_derives: [PartialEq],
});
