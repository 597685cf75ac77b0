//! How the CLI prints: human-readable tables by default, the API's JSON with `-o json`.

use comfy_table::presets::UTF8_BORDERS_ONLY;
use comfy_table::{ContentArrangement, Table};
use serde_json::Value;

/// The output format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Format {
    #[default]
    Table,
    Json,
}

/// A column: its header and where its value is in an item (a JSON pointer).
pub(super) type Column = (&'static str, &'static str);

/// A cell's text: strings bare, `null` as `-`, arrays and objects as compact JSON.
fn cell(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "-".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => other.to_string(),
    }
}

fn table() -> Table {
    let mut table = Table::new();
    table
        .load_preset(UTF8_BORDERS_ONLY)
        .set_content_arrangement(ContentArrangement::Dynamic);
    table
}

/// Prints a list: one row per item.
pub(super) fn list(format: Format, items: &[Value], columns: &[Column]) -> String {
    if format == Format::Json {
        return pretty(&Value::Array(items.to_vec()));
    }
    let mut t = table();
    t.set_header(columns.iter().map(|(h, _)| *h));
    for item in items {
        t.add_row(columns.iter().map(|(_, p)| cell(item.pointer(p))));
    }
    t.to_string()
}

/// Prints one resource: a row per top-level field.
pub(super) fn object(format: Format, value: &Value) -> String {
    if format == Format::Json {
        return pretty(value);
    }
    let Some(map) = value.as_object() else {
        return pretty(value);
    };
    let mut t = table();
    for (key, v) in map {
        t.add_row([key.clone(), cell(Some(v))]);
    }
    t.to_string()
}

pub(super) fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_show_fields_and_json_is_the_api_answer() {
        let items = [json!({"id": "a", "labels": ["x", "y"], "power": null, "n": {"k": 1}})];
        let text = list(
            Format::Table,
            &items,
            &[
                ("ID", "/id"),
                ("LABELS", "/labels"),
                ("POWER", "/power"),
                ("N", "/n/k"),
            ],
        );
        assert!(
            text.contains("ID") && text.contains("x,y") && text.contains(" - "),
            "{text}"
        );
        let json: Value = serde_json::from_str(&list(Format::Json, &items, &[])).unwrap();
        assert_eq!(json, json!(items));
        let one = object(Format::Table, &json!({"name": "acme", "id": "t1"}));
        assert!(one.contains("name") && one.contains("acme"), "{one}");
    }
}
