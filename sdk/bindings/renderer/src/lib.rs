//! The bindings of `podium:plugin@0.1.0`'s `renderer` world, sharing the interfaces of every world
//! with `podium-plugin-bindings` (see there why a crate per world).

wit_bindgen::generate!({
    path: "../../../wit/podium-plugin@0.1.0",
    world: "renderer",
    export_macro_name: "export_renderer",
    pub_export_macro: true,
    additional_derives: [PartialEq],
    with: {
        "podium:plugin/types@0.1.0": podium_plugin_bindings::podium::plugin::types,
        "podium:plugin/log@0.1.0": podium_plugin_bindings::podium::plugin::log,
        "podium:plugin/config@0.1.0": podium_plugin_bindings::podium::plugin::config,
    },
});
