//! The merge of `network_data.json` documents, one per DHCP-less pool of a host's boot NIC.

use serde_json::{Value, json};

/// Merges `network_data.json` documents (one per DHCP-less pool: IPv4 and IPv6 on the same boot
/// NIC): links by id, networks in order with ids made unique, DNS services without repeats.
pub(super) fn merge_network_data(documents: Vec<Value>) -> Value {
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

    #[test]
    fn merged_documents_share_links_and_keep_every_network() {
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
        let merged = merge_network_data(vec![v4, v6]);
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
}
