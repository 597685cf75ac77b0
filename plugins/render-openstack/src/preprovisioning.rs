//! The ramdisk's `network_data.json`: what the pod manager's DHCP-less IPAM pools wrote for the
//! host's boot NIC, one document per pool, joined (IPv4 and IPv6 on one NIC), or DHCP on the
//! boot NIC where no pool wrote one. OpenStack's rules, so the renderer's.

use serde_json::{Value, json};

use crate::{Error, Host};

/// Renders the preprovisioning `network_data.json` (JSON text) of `host` from `documents`.
pub fn render(host: &Host, documents: &[String]) -> Result<String, Error> {
    let documents = documents
        .iter()
        .enumerate()
        .map(|(i, text)| match serde_json::from_str::<Value>(text) {
            Ok(doc) if doc.is_object() => Ok(doc),
            Ok(_) => Err(Error::InvalidInput(format!(
                "documents[{i}]: a network_data.json document is a JSON object"
            ))),
            Err(e) => Err(Error::InvalidInput(format!(
                "documents[{i}]: not JSON: {e}"
            ))),
        })
        .collect::<Result<Vec<Value>, Error>>()?;
    let document = if documents.is_empty() {
        dhcp_on_boot_nic(host)
    } else {
        merge(documents)
    };
    serde_json::to_string(&document).map_err(|e| Error::Internal(e.to_string()))
}

/// DHCP (IPv4) on the NIC the host boots from, or its first; nothing where it has no NIC.
fn dhcp_on_boot_nic(host: &Host) -> Value {
    let mac = host
        .boot_mac
        .clone()
        .or_else(|| host.nics.first().map(|n| n.mac.clone()));
    match mac {
        None => json!({"links": [], "networks": [], "services": []}),
        Some(mac) => json!({
            "links": [{"id": "boot", "type": "phy", "ethernet_mac_address": mac}],
            "networks": [{"id": "boot-dhcp", "network_id": "boot-dhcp", "type": "ipv4_dhcp", "link": "boot"}],
            "services": [],
        }),
    }
}

/// Joins documents: links by id, networks in order with ids made unique, DNS services without
/// repeats.
fn merge(documents: Vec<Value>) -> Value {
    let mut links: Vec<Value> = Vec::new();
    let mut networks: Vec<Value> = Vec::new();
    let mut services: Vec<Value> = Vec::new();
    for doc in documents {
        let list = |key: &str| {
            doc.get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        for link in list("links") {
            if !links.iter().any(|l| l.get("id") == link.get("id")) {
                links.push(link);
            }
        }
        for mut network in list("networks") {
            let id = network
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("net")
                .to_owned();
            let mut unique = id.clone();
            let mut n = 1;
            while networks
                .iter()
                .any(|x| x.get("id").and_then(Value::as_str) == Some(&unique))
            {
                unique = format!("{id}-{n}");
                n += 1;
            }
            if unique != id {
                network["id"] = Value::String(unique.clone());
                network["network_id"] = Value::String(unique);
            }
            networks.push(network);
        }
        for service in list("services") {
            if !services.contains(&service) {
                services.push(service);
            }
        }
    }
    json!({"links": links, "networks": networks, "services": services})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Nic;

    fn host(boot_mac: Option<&str>, macs: &[&str]) -> Host {
        Host {
            id: "h1".into(),
            name: "node-1".into(),
            uuid: None,
            boot_mac: boot_mac.map(Into::into),
            nics: macs
                .iter()
                .map(|mac| Nic {
                    name: None,
                    mac: (*mac).into(),
                })
                .collect(),
        }
    }

    fn parsed(text: Result<String, Error>) -> Value {
        serde_json::from_str(&text.expect("rendered")).unwrap()
    }

    #[test]
    fn documents_of_several_pools_share_links_and_keep_every_network() {
        let v4 = json!({
            "links": [{"id": "boot", "type": "phy", "ethernet_mac_address": "aa:bb:cc:dd:ee:ff"}],
            "networks": [{"id": "boot", "network_id": "boot", "type": "ipv4", "link": "boot"}],
            "services": [{"type": "dns", "address": "192.0.2.53"}],
        });
        let v6 = json!({
            "links": [{"id": "boot", "type": "phy", "ethernet_mac_address": "aa:bb:cc:dd:ee:ff"}],
            "networks": [{"id": "boot", "network_id": "boot", "type": "ipv6", "link": "boot"}],
            "services": [{"type": "dns", "address": "192.0.2.53"}, {"type": "dns", "address": "2001:db8::53"}],
        });
        let merged = parsed(render(
            &host(None, &["aa:bb:cc:dd:ee:ff"]),
            &[v4.to_string(), v6.to_string()],
        ));
        assert_eq!(merged["links"].as_array().unwrap().len(), 1);
        let ids: Vec<&str> = merged["networks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["boot", "boot-1"]);
        assert_eq!(merged["networks"][1]["network_id"], "boot-1");
        assert_eq!(merged["services"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn without_a_pool_the_boot_nic_takes_dhcp() {
        let doc = parsed(render(
            &host(
                Some("52:54:00:00:00:02"),
                &["52:54:00:00:00:01", "52:54:00:00:00:02"],
            ),
            &[],
        ));
        assert_eq!(doc["links"][0]["ethernet_mac_address"], "52:54:00:00:00:02");
        assert_eq!(doc["networks"][0]["type"], "ipv4_dhcp");
        let first = parsed(render(&host(None, &["52:54:00:00:00:01"]), &[]));
        assert_eq!(
            first["links"][0]["ethernet_mac_address"],
            "52:54:00:00:00:01"
        );
        let none = parsed(render(&host(None, &[]), &[]));
        assert_eq!(none, json!({"links": [], "networks": [], "services": []}));
    }

    #[test]
    fn a_document_that_is_none_is_refused_by_its_index() {
        let e = render(&host(None, &[]), &["{}".into(), "[1]".into()]).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidInput(m) if m.starts_with("documents[1]: ")),
            "{e:?}"
        );
        let e = render(&host(None, &[]), &["{".into()]).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidInput(m) if m.starts_with("documents[0]: not JSON")),
            "{e:?}"
        );
    }
}
