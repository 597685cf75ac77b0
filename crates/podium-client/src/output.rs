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

/// Prints one resource: a row per field, nested objects and lists of objects flattened into
/// rows of their own (`error.message`, `nics[0].mac`), so no cell holds raw JSON; the table
/// wraps to the terminal's width.
pub(super) fn object(format: Format, value: &Value) -> String {
    if format == Format::Json || !value.is_object() {
        return pretty(value);
    }
    let mut rows = Vec::new();
    flatten(String::new(), value, &mut rows);
    let mut t = table();
    for row in rows {
        t.add_row(row);
    }
    t.to_string()
}

fn flatten(key: String, value: &Value, rows: &mut Vec<[String; 2]>) {
    let join = |sub: &str| {
        if key.is_empty() {
            sub.to_owned()
        } else {
            format!("{key}.{sub}")
        }
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                flatten(join(k), v, rows);
            }
        }
        Value::Array(items) if items.iter().any(|v| v.is_object() || v.is_array()) => {
            for (i, v) in items.iter().enumerate() {
                flatten(format!("{key}[{i}]"), v, rows);
            }
        }
        Value::Object(_) => rows.push([key, "-".into()]),
        scalar_or_list => rows.push([key, cell(Some(scalar_or_list))]),
    }
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

    #[test]
    fn nested_fields_get_rows_of_their_own_and_no_cell_holds_json() {
        let host = json!({
            "id": "h1",
            "error": {"type": "inspection", "message": "bmc down"},
            "labels": {},
            "nics": [{"mac": "52:54:00:00:00:01", "speed_mbps": null}],
            "media_types": ["cd", "usb"],
        });
        let text = object(Format::Table, &host);
        for want in [
            "error.type",
            "inspection",
            "error.message",
            "nics[0].mac",
            "52:54:00:00:00:01",
            "nics[0].speed_mbps",
            "cd,usb",
        ] {
            assert!(text.contains(want), "{want} in {text}");
        }
        assert!(!text.contains('{') && !text.contains('"'), "{text}");
    }
}
