//! The deploy agent's API (`docs/deploy.md`) at its edges, against the Redfish emulator: how the
//! agent finds Podium (the preprovisioning drive's `etc/ironic-python-agent.d/podium.conf`),
//! what a lookup answers and to whom, the token issued once, and the heartbeats refused (no
//! token, another one, an address Podium did not give the host, no certificate). Nothing here
//! reaches an agent: the real one (IPA from PyPI, in a VM) connects in `tests/boot/`.

use podium_tests::{Site, vfat};
use podium_types::views::{AgentState, AgentView};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::lifecycle::inspect;
use crate::pod_managers::wait_succeeded;

#[tokio::test]
async fn an_agent_is_answered_only_on_a_host_booting_its_ramdisk_and_only_with_its_token() {
    let Site {
        server,
        bmc: _bmc,
        images,
        admin,
        pm,
    } = Site::start(1).await;
    let host = admin.systems_in_state(&pm, 1, "available").await.remove(0);
    let host_id = host.id.to_string();
    let mac = host.nics[0].mac.clone();
    let agent_api = server.client(None);

    // Ironic's API root: the version at which IPA sends its token and serves TLS.
    let root = agent_api.get("/agent/").await;
    assert_eq!(root.status, StatusCode::OK, "{}", root.text);
    assert_eq!(
        root.body["default_version"]["version"], "1.68",
        "{}",
        root.text
    );

    // A host that boots no ramdisk: its MACs are unknown to the agent's API.
    let lookup = |macs: String| {
        let agent_api = &agent_api;
        async move {
            agent_api
                .get(&format!("/agent/v1/lookup?addresses={macs}"))
                .await
        }
    };
    let idle = lookup(mac.clone()).await;
    assert_eq!(idle.status, StatusCode::NOT_FOUND, "{}", idle.text);
    assert!(!idle.text.contains(&host_id), "{}", idle.text);
    let none = admin.get(&format!("/v1/hosts/{host_id}/agent")).await;
    assert_eq!(none.status, StatusCode::NOT_FOUND, "{}", none.text);
    for bad in ["", "52:54:00", "zz:54:00:00:00:01"] {
        let refused = lookup(bad.to_owned()).await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{bad}: {}",
            refused.text
        );
        assert_eq!(refused.field(), "addresses", "{}", refused.text);
    }

    // The site boots its ramdisk at inspection: the agent is expected from then on.
    admin
        .created(
            "/v1/ip_pools",
            json!({"name": "prov", "ranges": [{"start": "10.81.0.10", "end": "10.81.0.20"}],
                   "prefix": 24, "gateway": "10.81.0.1", "pod_manager": pm,
                   "plugin": {"name": "ipam-dhcpless"}}),
        )
        .await;
    let ramdisk = images.url("/ramdisk.iso");
    let set = admin
        .patch(
            &format!("/v1/pod_managers/{pm}"),
            json!({ "preprovisioning_image": ramdisk, "deploy": {"allow_md5": true} }),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text);
    let inspected = wait_succeeded(&admin, &inspect(&admin, &host_id).await).await;
    let prepared = &inspected["result"]["preprovisioning"];
    let address = prepared["addresses"][0]["address"]
        .as_str()
        .unwrap()
        .to_owned();
    let agent: AgentView = admin
        .get(&format!("/v1/hosts/{host_id}/agent"))
        .await
        .view();
    assert_eq!(agent.state, AgentState::Booting);
    assert_eq!(agent.address, address);

    // The drive tells the agent where Podium answers it, where IPA reads its settings.
    let drive = admin
        .post(
            &format!("/v1/hosts/{host_id}/config_drive"),
            json!({"phase": "preprovisioning"}),
        )
        .await;
    assert_eq!(drive.status, StatusCode::CREATED, "{}", drive.text);
    let url = drive.body["url"].as_str().unwrap();
    let files = vfat::drive_files(&server.client(None), url).await;
    let config = String::from_utf8(files["etc/ironic-python-agent.d/podium.conf"].clone()).unwrap();
    assert!(
        config.contains(&format!(
            "api_url = {}/agent",
            server.url.trim_end_matches('/')
        )),
        "{config}"
    );

    // The lookup: the host, and the token once (IPA's rule: 32 characters at least).
    let first = lookup(format!("02:00:00:00:00:99,{}", mac.to_uppercase())).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text);
    assert_eq!(
        first.body["node"]["uuid"],
        host_id.as_str(),
        "{}",
        first.text
    );
    let token = first.body["config"]["agent_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(token.len() >= 32, "{token}");
    assert_eq!(first.body["config"]["agent_token_required"], true);
    // md5 checksums as the pod manager allows them (IPA refuses them unless told).
    assert_eq!(first.body["config"]["agent_md5_checksum_enable"], true);
    let again = lookup(mac.clone()).await;
    assert_eq!(
        again.body["config"]["agent_token"], "******",
        "{}",
        again.text
    );
    let agent: AgentView = admin
        .get(&format!("/v1/hosts/{host_id}/agent"))
        .await
        .view();
    assert_eq!(agent.state, AgentState::LookedUp);
    assert!(
        !serde_json::to_string(&agent).unwrap().contains(&token),
        "the admin's view shows no token"
    );

    // Heartbeats: only with the token, only from the address Podium gave, only over TLS.
    let heartbeat = |body: Value| {
        let agent_api = &agent_api;
        let path = format!("/agent/v1/heartbeat/{host_id}");
        async move { agent_api.post(&path, body).await }
    };
    let certificate = rcgen::generate_simple_self_signed(vec![address.clone()])
        .unwrap()
        .cert
        .pem();
    let beat = |token: Option<&str>, callback: &str, ca: Option<&str>| {
        let mut body = json!({"callback_url": callback, "agent_version": "13.0.0"});
        if let Some(token) = token {
            body["agent_token"] = json!(token);
        }
        if let Some(ca) = ca {
            body["agent_verify_ca"] = json!(ca);
        }
        body
    };
    let here = format!("https://{address}:9999");
    for (body, status, field) in [
        (
            beat(None, &here, Some(&certificate)),
            StatusCode::UNAUTHORIZED,
            "",
        ),
        (
            beat(Some(&"x".repeat(43)), &here, Some(&certificate)),
            StatusCode::UNAUTHORIZED,
            "",
        ),
        (
            beat(Some(&token), "https://10.81.0.99:9999", Some(&certificate)),
            StatusCode::UNPROCESSABLE_ENTITY,
            "callback_url",
        ),
        (
            beat(
                Some(&token),
                &format!("http://{address}:9999"),
                Some(&certificate),
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "callback_url",
        ),
        (
            beat(Some(&token), &here, None),
            StatusCode::UNPROCESSABLE_ENTITY,
            "agent_verify_ca",
        ),
        (
            beat(Some(&token), &here, Some("not a certificate")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "agent_verify_ca",
        ),
    ] {
        let refused = heartbeat(body.clone()).await;
        assert_eq!(refused.status, status, "{body}: {}", refused.text);
        if !field.is_empty() {
            assert_eq!(refused.field(), field, "{}", refused.text);
        }
        assert!(!refused.text.contains(&token), "{}", refused.text);
    }
    let elsewhere = agent_api
        .post(
            &format!("/agent/v1/heartbeat/{}", podium_types::HostId::generate()),
            beat(Some(&token), &here, Some(&certificate)),
        )
        .await;
    assert_eq!(
        elsewhere.status,
        StatusCode::NOT_FOUND,
        "{}",
        elsewhere.text
    );
    let agent: AgentView = admin
        .get(&format!("/v1/hosts/{host_id}/agent"))
        .await
        .view();
    assert_eq!(
        (agent.state, agent.heartbeats, agent.url),
        (AgentState::LookedUp, 0, None),
        "no heartbeat was taken"
    );

    // Bounded: sixty lookups a minute per host.
    let mut limited = None;
    for _ in 0..70 {
        let reply = lookup(mac.clone()).await;
        if reply.status == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(reply);
            break;
        }
    }
    let limited = limited.expect("a host's lookups are bounded");
    assert!(limited.message().contains("60"), "{}", limited.text);

    // Tenants see no agent.
    let (_, tenant_token) = admin.granted_tenant("alice", &pm).await;
    let tenant = server.client(Some(&tenant_token));
    let refused = tenant.get(&format!("/v1/hosts/{host_id}/agent")).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text);
}
