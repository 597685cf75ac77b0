//! `podium chassis`: the component tree under a pod manager (its racks, enclosures, blades), and
//! a chassis' power.

use clap::Subcommand;
use serde_json::Value;

use podium_types::requests::PowerParams;

use super::client::Client;
use super::input::{parsed, seg};
use super::names::Named;
use super::output::{self, Format};
use super::print;

#[derive(Debug, Subcommand)]
pub(super) enum ChassisCommand {
    /// The chassis of a pod manager (uuid or name) as a tree: each with its type, place, state
    /// and how many hosts it holds itself (a tenant: the chassis its grant reaches).
    Tree { pod_manager: String },
    /// Show a chassis by id (admin).
    Show { id: String },
    /// Power a chassis (admin): on, off (the BMC's ForceOff), graceful_shutdown, force_off,
    /// graceful_restart, force_restart. Refused while a host within it is in use; shows the
    /// chassis as it stands after.
    Power { id: String, action: String },
}

impl ChassisCommand {
    /// The pod manager it was given, which may be a name.
    pub(super) fn names(&mut self) -> Vec<(Named, &mut String)> {
        match self {
            ChassisCommand::Tree { pod_manager } => vec![(Named::PodManager, pod_manager)],
            ChassisCommand::Show { .. } | ChassisCommand::Power { .. } => Vec::new(),
        }
    }
}

pub(super) async fn run(
    url: Option<&str>,
    format: Format,
    cmd: ChassisCommand,
) -> anyhow::Result<()> {
    let c = Client::from_env(url)?;
    match cmd {
        ChassisCommand::Tree { pod_manager } => {
            let path = if c.is_tenant().await? {
                format!("/v1/me/pod_managers/{}/chassis", seg(&pod_manager)?)
            } else {
                format!("/v1/pod_managers/{}/chassis", seg(&pod_manager)?)
            };
            let items = c.list(&path).await?;
            match format {
                Format::Json => print(output::pretty(&Value::Array(items))),
                Format::Table => print(tree(&items)),
            }
        }
        ChassisCommand::Show { id } => {
            let chassis = c.get(&format!("/v1/chassis/{}", seg(&id)?)).await?;
            print(output::object(format, &chassis));
        }
        ChassisCommand::Power { id, action } => {
            let chassis = c
                .post(
                    &format!("/v1/chassis/{}/power", seg(&id)?),
                    &PowerParams {
                        action: parsed("ACTION", &action)?,
                    },
                )
                .await?;
            print(output::object(format, &chassis));
        }
    }
    Ok(())
}

/// The chassis drawn as a tree, each under its parent, in the order listed; a chassis whose
/// parent is not listed is at the top.
fn tree(items: &[Value]) -> String {
    let id = |item: &Value| item["id"].as_str().unwrap_or_default().to_owned();
    let listed: std::collections::HashSet<String> = items.iter().map(id).collect();
    let parent = |item: &Value| {
        item["parent"]
            .as_str()
            .filter(|p| listed.contains(*p))
            .map(str::to_owned)
    };
    let mut out = String::new();
    let roots: Vec<&Value> = items.iter().filter(|i| parent(i).is_none()).collect();
    if roots.is_empty() {
        return "no chassis".into();
    }
    // Depth first, with the guides of the levels above.
    let mut stack: Vec<(&Value, String, bool, bool)> = roots
        .iter()
        .enumerate()
        .rev()
        .map(|(n, r)| (*r, String::new(), n + 1 == roots.len(), true))
        .collect();
    while let Some((item, guides, last, root)) = stack.pop() {
        let branch = match (root, last) {
            (true, _) => "",
            (false, true) => "└─ ",
            (false, false) => "├─ ",
        };
        out.push_str(&format!("{guides}{branch}{}\n", line(item)));
        let below = match (root, last) {
            (true, _) => guides.clone(),
            (false, true) => format!("{guides}   "),
            (false, false) => format!("{guides}│  "),
        };
        let me = id(item);
        let children: Vec<&Value> = items
            .iter()
            .filter(|i| parent(i).as_deref() == Some(me.as_str()))
            .collect();
        for (n, child) in children.iter().enumerate().rev() {
            stack.push((child, below.clone(), n + 1 == children.len(), false));
        }
    }
    out.trim_end().to_owned()
}

/// One chassis: `Blade 1 (Blade) at "Blade 1", 1 host [missing] ID`.
fn line(item: &Value) -> String {
    let text = |key: &str| item[key].as_str().unwrap_or_default().to_owned();
    let mut line = format!("{} ({})", text("name"), text("chassis_type"));
    if let Some(location) = item["location"].as_str() {
        line.push_str(&format!(" at \"{location}\""));
    }
    if let Some(hosts) = item["hosts"].as_array()
        && !hosts.is_empty()
    {
        let s = if hosts.len() == 1 { "" } else { "s" };
        line.push_str(&format!(", {} host{s}", hosts.len()));
    }
    if item["state"] == "missing" {
        line.push_str(" [missing]");
    }
    line.push_str(&format!("  {}", text("id")));
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_rack_of_two_enclosures_is_drawn_with_its_guides() {
        let items = [
            json!({"id": "r", "name": "Rack 7", "chassis_type": "Rack", "parent": null, "location": "row North, rack R7"}),
            json!({"id": "e1", "name": "Encl 1", "chassis_type": "Enclosure", "parent": "r"}),
            json!({"id": "b1", "name": "Blade 1", "chassis_type": "Blade", "parent": "e1", "hosts": ["h1"]}),
            json!({"id": "e2", "name": "Encl 2", "chassis_type": "Enclosure", "parent": "r", "state": "missing"}),
            json!({"id": "b2", "name": "Blade 2", "chassis_type": "Blade", "parent": "e2", "hosts": ["h2", "h3"]}),
            json!({"id": "x", "name": "Lone", "chassis_type": "StandAlone", "parent": "unlisted"}),
        ];
        let expected = [
            r#"Rack 7 (Rack) at "row North, rack R7"  r"#,
            "├─ Encl 1 (Enclosure)  e1",
            "│  └─ Blade 1 (Blade), 1 host  b1",
            "└─ Encl 2 (Enclosure) [missing]  e2",
            "   └─ Blade 2 (Blade), 2 hosts  b2",
            "Lone (StandAlone)  x",
        ];
        assert_eq!(tree(&items), expected.join("\n"));
        assert_eq!(tree(&[]), "no chassis");
    }
}
