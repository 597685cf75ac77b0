//! Native tests of the `strategy` configuration field: defaults, values, and errors that name
//! the field.

use plugin_ipam_static::config::{Config, Strategy};

#[test]
fn defaults_to_sequential() {
    assert_eq!(Config::parse("{}").unwrap().strategy, Strategy::Sequential);
    assert_eq!(
        Config::parse(r#"{"strategy":"sequential"}"#)
            .unwrap()
            .strategy,
        Strategy::Sequential
    );
    assert_eq!(
        Config::parse(r#"{"strategy":"random"}"#).unwrap().strategy,
        Strategy::Random
    );
}

#[test]
fn errors_name_the_field() {
    let e = Config::parse(r#"{"strategy":"lowest"}"#).unwrap_err();
    assert!(e.starts_with("strategy:"), "{e}");
    let e = Config::parse(r#"{"strategy":3}"#).unwrap_err();
    assert!(e.starts_with("strategy:"), "{e}");
    let e = Config::parse(r#"{"stratgy":"random"}"#).unwrap_err();
    assert!(e.starts_with("stratgy: unknown field"), "{e}");
    assert!(Config::parse("[]").unwrap_err().contains("JSON object"));
    assert!(Config::parse("{").unwrap_err().contains("not valid JSON"));
}
