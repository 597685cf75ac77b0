//! Podium's own Redfish service (`/redfish/v1`): a tenant drives the host it claimed with its
//! Podium token as the credential, sees nothing else, and every action reaches the real BMC
//! (sushy-tools) behind Podium; DMTF's `redfish` library, OpenStack's `sushy` and unmodified
//! standalone Ironic drive it as they drive a BMC.

use std::time::Duration;

use podium_tests::ironic::Ironic;
use podium_tests::redfish_face::{Answer, Auth, get, members, post, redfish};
use podium_tests::site::quick;
use podium_tests::sushy::{SushyConfig, run_peer_script, run_peer_tool};
use podium_tests::{BMC_PASSWORD, Site, Tenant, TestServer, eventually};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The UUID the BMC reports for a host (its system's id at sushy-tools' fake driver).
async fn bmc_uuid(site: &Site, host: &podium_types::HostId) -> String {
    let host = site.server.admin().get(&format!("/v1/hosts/{host}")).await;
    host.body["uuid"].as_str().unwrap().to_owned()
}

/// Follows a task monitor until the operation ends; its last answer.
async fn finished(site: &Site, accepted: &Answer, auth: Auth<'_>) -> Answer {
    assert_eq!(accepted.status, StatusCode::ACCEPTED, "{}", accepted.text);
    let monitor = accepted.header("location").to_owned();
    assert!(
        monitor.starts_with("/redfish/v1/TaskService/TaskMonitors/"),
        "{monitor}"
    );
    eventually(Duration::from_secs(30), "the task ends", || async {
        let a = get(site, &monitor, auth).await;
        (a.status != StatusCode::ACCEPTED).then_some(a)
    })
    .await
}

#[tokio::test]
async fn a_tenant_drives_only_its_claimed_host_through_redfish_with_its_token() {
    let site = Site::start(2).await;
    let Tenant {
        id: alice_id,
        token: alice,
        ..
    } = site.tenant("alice").await;
    let Tenant { token: bob, .. } = site.tenant("bob").await;
    let podium_tests::site::Claimed { id: claim_id, host } = site.claimed(&alice).await;
    let system = format!("/redfish/v1/Systems/{host}");
    let admin = site.server.admin();
    let bmc_uuid = bmc_uuid(&site, &host).await;
    let bmc_system = format!("/redfish/v1/Systems/{bmc_uuid}");

    // The service root answers anyone; everything else wants a token.
    let root = get(&site, "/redfish/v1/", Auth::None).await;
    assert_eq!(root.status, StatusCode::OK, "{}", root.text);
    assert_eq!(root.body["Systems"]["@odata.id"], "/redfish/v1/Systems");
    let anonymous = get(&site, "/redfish/v1/Systems", Auth::None).await;
    assert_eq!(
        anonymous.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        anonymous.text
    );
    assert_eq!(anonymous.message_id(), "Base.1.8.NoValidSession");
    assert!(anonymous.header("www-authenticate").starts_with("Basic"));
    let wrong = get(&site, "/redfish/v1/Systems", Auth::Basic("pdm_not-a-token")).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{}", wrong.text);

    // Alice sees her host, and only Podium's paths: never the BMC, its password or its path.
    let systems = get(&site, "/redfish/v1/Systems", Auth::Basic(&alice)).await;
    assert_eq!(members(&systems), vec![system.clone()], "{}", systems.text);
    let seen = get(&site, &system, Auth::Basic(&alice)).await;
    assert_eq!(seen.status, StatusCode::OK, "{}", seen.text);
    assert_eq!(seen.body["Id"], host.as_str());
    assert_eq!(seen.body["UUID"], bmc_uuid.as_str());
    assert_eq!(seen.body["PowerState"], "Off", "{}", seen.text);
    assert_eq!(seen.body["Oem"]["Podium"]["Claim"], claim_id.as_str());
    assert!(
        seen.body["Boot"]["BootSourceOverrideTarget@Redfish.AllowableValues"]
            .as_array()
            .unwrap()
            .contains(&json!("Cd"))
    );
    let etag = seen.header("etag").to_owned();
    assert!(etag.starts_with("W/\""), "{etag}");
    assert_eq!(seen.body["@odata.etag"], etag.as_str());
    for leak in [site.bmc.url(), BMC_PASSWORD.to_owned(), bmc_system.clone()] {
        assert!(
            !seen.text.contains(&leak),
            "the system leaks `{leak}`: {}",
            seen.text
        );
    }
    let nics = get(
        &site,
        &format!("{system}/EthernetInterfaces"),
        Auth::Basic(&alice),
    )
    .await;
    let nic = get(&site, &members(&nics)[0], Auth::Basic(&alice)).await;
    assert!(
        nic.body["MACAddress"]
            .as_str()
            .unwrap()
            .starts_with("52:54:00:"),
        "{}",
        nic.text
    );

    // Bob, granted the same site, sees no system: Alice's is not found, whatever he tries.
    let bobs = get(&site, "/redfish/v1/Systems", Auth::Basic(&bob)).await;
    assert!(members(&bobs).is_empty(), "{}", bobs.text);
    let hidden = get(&site, &system, Auth::Basic(&bob)).await;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND, "{}", hidden.text);
    assert_eq!(hidden.message_id(), "Base.1.8.ResourceNotFound");
    let reset_path = format!("{system}/Actions/ComputerSystem.Reset");
    let refused = post(
        &site,
        &reset_path,
        Auth::Basic(&bob),
        json!({"ResetType": "On"}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND, "{}", refused.text);

    // A read-only token reads and changes nothing.
    let read_only = admin
        .created(
            &format!("/v1/tenants/{alice_id}/tokens"),
            json!({"read_only": true}),
        )
        .await
        .body["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        get(&site, &system, Auth::Basic(&read_only)).await.status,
        StatusCode::OK
    );
    let refused = post(
        &site,
        &reset_path,
        Auth::Basic(&read_only),
        json!({"ResetType": "On"}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text);
    assert_eq!(refused.message_id(), "Base.1.8.InsufficientPrivilege");

    // Bad input is refused in Redfish's words, naming what is wrong.
    let nmi = post(
        &site,
        &reset_path,
        Auth::Basic(&alice),
        json!({"ResetType": "Nmi"}),
    )
    .await;
    assert_eq!(nmi.status, StatusCode::BAD_REQUEST, "{}", nmi.text);
    assert_eq!(nmi.message_id(), "Base.1.8.ActionParameterValueNotInList");
    assert!(nmi.text.contains("ForceOff"), "{}", nmi.text);
    let unknown = post(
        &site,
        &reset_path,
        Auth::Basic(&alice),
        json!({"ResetKind": "On"}),
    )
    .await;
    assert_eq!(
        unknown.message_id(),
        "Base.1.8.ActionParameterUnknown",
        "{}",
        unknown.text
    );
    let malformed = redfish(
        &site,
        Method::POST,
        &reset_path,
        Auth::Basic(&alice),
        &[],
        Some("{"),
    )
    .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    assert_eq!(malformed.message_id(), "Base.1.8.MalformedJSON");
    let patch = |auth, if_match: &'static str, body: Value| {
        let system = system.clone();
        let site = &site;
        async move {
            let headers: &[(&str, &str)] = if if_match.is_empty() {
                &[]
            } else {
                &[("If-Match", if_match)]
            };
            redfish(
                site,
                Method::PATCH,
                &system,
                auth,
                headers,
                Some(&body.to_string()),
            )
            .await
        }
    };
    let unknown = patch(Auth::Basic(&alice), "", json!({"AssetTag": "x"})).await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST, "{}", unknown.text);
    assert_eq!(unknown.message_id(), "Base.1.8.PropertyUnknown");
    let stale = patch(
        Auth::Basic(&alice),
        "W/\"stale\"",
        json!({"Boot": {"BootSourceOverrideTarget": "Cd"}}),
    )
    .await;
    assert_eq!(
        stale.status,
        StatusCode::PRECONDITION_FAILED,
        "{}",
        stale.text
    );

    // A reset reaches the BMC: 202, a task monitor, 204 when done, the emulator On.
    let on = post(
        &site,
        &reset_path,
        Auth::Basic(&alice),
        json!({"ResetType": "On"}),
    )
    .await;
    let done = finished(&site, &on, Auth::Basic(&alice)).await;
    assert_eq!(done.status, StatusCode::NO_CONTENT, "{}", done.text);
    assert_eq!(
        site.bmc.get_json(&bmc_system).await.unwrap()["PowerState"],
        "On"
    );
    assert_eq!(
        get(&site, &system, Auth::Basic(&alice)).await.body["PowerState"],
        "On"
    );
    // The same state rules as the API: a host in maintenance refuses the tenant's action, in
    // Redfish's words, naming why; the BMC is not touched.
    let maintained = site
        .server
        .admin()
        .put(
            &format!("/v1/hosts/{host}/maintenance"),
            json!({"reason": "disk swap"}),
        )
        .await;
    assert!(maintained.status.is_success(), "{}", maintained.text);
    let busy = post(
        &site,
        &reset_path,
        Auth::Basic(&alice),
        json!({"ResetType": "ForceOff"}),
    )
    .await;
    assert_eq!(busy.status, StatusCode::CONFLICT, "{}", busy.text);
    assert_eq!(busy.message_id(), "Base.1.8.ResourceInUse");
    assert!(busy.text.contains("is maintenance"), "{}", busy.text);
    assert_eq!(
        site.bmc.get_json(&bmc_system).await.unwrap()["PowerState"],
        "On"
    );
    let ended = site
        .server
        .admin()
        .delete(&format!("/v1/hosts/{host}/maintenance"))
        .await;
    assert!(ended.status.is_success(), "{}", ended.text);
    // Powered off behind Podium's back (at the BMC): a Redfish read shows it within
    // POWER_FRESH_SECS, as a tool polling the power state expects.
    site.bmc
        .request(
            Method::POST,
            &format!("{bmc_system}/Actions/ComputerSystem.Reset"),
        )
        .json(&json!({"ResetType": "ForceOff"}))
        .send()
        .await
        .unwrap();
    eventually(
        Duration::from_secs(20),
        "the BMC's power state read again",
        || async {
            (get(&site, &system, Auth::Basic(&alice)).await.body["PowerState"] == "Off")
                .then_some(())
        },
    )
    .await;
    // A boot override with the current ETag.
    let etag = get(&site, &system, Auth::Basic(&alice))
        .await
        .header("etag")
        .to_owned();
    let headers = [("If-Match", etag.as_str())];
    let boot = redfish(
        &site,
        Method::PATCH,
        &system,
        Auth::Basic(&alice),
        &headers,
        Some(&json!({"Boot": {"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}}).to_string()),
    )
    .await;
    let done = finished(&site, &boot, Auth::Basic(&alice)).await;
    assert_eq!(done.status, StatusCode::NO_CONTENT, "{}", done.text);
    let emulated = site.bmc.get_json(&bmc_system).await.unwrap();
    assert_eq!(
        emulated["Boot"]["BootSourceOverrideTarget"], "Cd",
        "{emulated}"
    );

    // Sessions: opened with the token as the password, used by X-Auth-Token, ended by DELETE.
    let login = json!({"UserName": "alice", "Password": alice});
    let opened = post(
        &site,
        "/redfish/v1/SessionService/Sessions",
        Auth::None,
        login,
    )
    .await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.text);
    let session_token = opened.header("x-auth-token").to_owned();
    let session = opened.header("location").to_owned();
    assert!(!session_token.is_empty() && session_token != alice);
    assert!(!opened.text.contains(&session_token) && !opened.text.contains(&alice));
    let via_session = get(&site, "/redfish/v1/Systems", Auth::Session(&session_token)).await;
    assert_eq!(members(&via_session), vec![system.clone()]);
    assert_eq!(
        get(&site, &session, Auth::Session(&session_token))
            .await
            .body["UserName"],
        "alice"
    );
    assert_eq!(
        get(&site, &session, Auth::Basic(&bob)).await.status,
        StatusCode::NOT_FOUND
    );
    let bad = post(
        &site,
        "/redfish/v1/SessionService/Sessions",
        Auth::None,
        json!({"UserName": "alice", "Password": "pdm_wrong"}),
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNAUTHORIZED, "{}", bad.text);
    let ended = redfish(
        &site,
        Method::DELETE,
        &session,
        Auth::Session(&session_token),
        &[],
        None,
    )
    .await;
    assert_eq!(ended.status, StatusCode::NO_CONTENT, "{}", ended.text);
    let after = get(&site, "/redfish/v1/Systems", Auth::Session(&session_token)).await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED, "{}", after.text);

    // A revoked token is refused at once, as Basic and through the sessions it opened.
    let second = admin
        .created(&format!("/v1/tenants/{alice_id}/tokens"), json!({}))
        .await;
    let (second_id, second) = (
        second.body["id"].as_str().unwrap().to_owned(),
        second.body["token"].as_str().unwrap().to_owned(),
    );
    let opened = post(
        &site,
        "/redfish/v1/SessionService/Sessions",
        Auth::None,
        json!({"UserName": "alice", "Password": second}),
    )
    .await;
    let second_session = opened.header("x-auth-token").to_owned();
    assert_eq!(
        get(&site, &system, Auth::Session(&second_session))
            .await
            .status,
        StatusCode::OK
    );
    let revoked = admin
        .delete(&format!("/v1/tenants/{alice_id}/tokens/{second_id}"))
        .await;
    assert!(revoked.status.is_success(), "{}", revoked.text);
    assert_eq!(
        get(&site, &system, Auth::Basic(&second)).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        get(&site, &system, Auth::Session(&second_session))
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );

    // An expired token is refused as soon as it expires.
    let brief = admin
        .created(
            &format!("/v1/tenants/{alice_id}/tokens"),
            json!({"expires_in": 1}),
        )
        .await
        .body["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        get(&site, &system, Auth::Basic(&brief)).await.status,
        StatusCode::OK
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let expired = get(&site, &system, Auth::Basic(&brief)).await;
    assert_eq!(expired.status, StatusCode::UNAUTHORIZED, "{}", expired.text);
    assert!(expired.text.contains("expired"), "{}", expired.text);

    // The admin sees every host.
    let all = get(
        &site,
        "/redfish/v1/Systems",
        Auth::Basic(podium_tests::ADMIN_TOKEN),
    )
    .await;
    assert_eq!(members(&all).len(), 2, "{}", all.text);

    // Released: the system is gone from Alice's view at once.
    let released = site
        .server
        .client(Some(&alice))
        .send(Method::DELETE, &format!("/v1/claims/{claim_id}"), None)
        .await;
    assert_eq!(released.status, StatusCode::ACCEPTED, "{}", released.text);
    assert_eq!(
        get(&site, &system, Auth::Basic(&alice)).await.status,
        StatusCode::NOT_FOUND
    );
    assert!(members(&get(&site, "/redfish/v1/Systems", Auth::Basic(&alice)).await).is_empty());
}

#[tokio::test]
async fn dmtf_redfish_and_openstack_sushy_drive_a_claimed_host_through_podium() {
    let site = Site::start(1).await;
    let Tenant { token: alice, .. } = site.tenant("alice").await;
    let host = site.claimed(&alice).await.host;
    let bmc_uuid = bmc_uuid(&site, &host).await;
    let image = site.images.url("/tenant.iso");
    let out = run_peer_script(
        "redfish_clients.py",
        &[&site.server.url, &alice, host.as_str(), &image],
    )
    .await
    .unwrap();
    let seen: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    // DMTF's library: a session, a reset followed through its task monitor, Basic, a bad token.
    assert_eq!(
        seen["session_members"],
        json!([format!("/redfish/v1/Systems/{host}")]),
        "{seen}"
    );
    assert_eq!(seen["reset_status"], 202, "{seen}");
    assert_eq!(seen["reset_final_status"], 204, "{seen}");
    assert_eq!(seen["power_after_reset"], "On", "{seen}");
    assert_eq!(seen["basic_uuid"], bmc_uuid.as_str(), "{seen}");
    assert_eq!(seen["bad_login"], "refused", "{seen}");
    // sushy, as Ironic drives a BMC: what it did is what the BMC behind Podium shows.
    assert_eq!(seen["sushy_uuid"], bmc_uuid.as_str(), "{seen}");
    assert_eq!(seen["sushy_power"], "On", "{seen}");
    let bmc_system = format!("/redfish/v1/Systems/{bmc_uuid}");
    let emulated = eventually(
        Duration::from_secs(30),
        "the BMC shows sushy's work",
        || async {
            let system = site.bmc.get_json(&bmc_system).await.ok()?;
            let cd = site
                .bmc
                .get_json(&format!("{bmc_system}/VirtualMedia/Cd"))
                .await
                .ok()?;
            (system["Boot"]["BootSourceOverrideTarget"] == "Cd" && cd["Inserted"] == true)
                .then_some((system, cd))
        },
    )
    .await;
    assert_eq!(emulated.0["PowerState"], "On", "{}", emulated.0);
    assert_eq!(emulated.1["Image"], image.as_str(), "{}", emulated.1);
}

/// One of Ironic's nodes, as its API shows it.
async fn ironic_node(ironic: &Ironic, node: &str) -> Value {
    ironic
        .request(Method::GET, &format!("/nodes/{node}"), None)
        .await
        .unwrap()
}

/// Waits until Ironic's node is in `state` (or stops in `stop`); the node.
async fn ironic_settles(ironic: &Ironic, node: &str, field: &str, want: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let n = ironic_node(ironic, node).await;
        let busy = !n["target_provision_state"].is_null() || !n["target_power_state"].is_null();
        if n[field] == want || (!busy && !n["last_error"].is_null()) {
            return n;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Ironic's node never reached {field} = {want}: {n}\n{}",
            ironic.log()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test]
async fn unmodified_ironic_manages_powers_and_boots_a_claimed_host_through_podium() {
    let site = Site::start(1).await;
    let Tenant { token: alice, .. } = site.tenant("alice").await;
    let Tenant { token: bob, .. } = site.tenant("bob").await;
    let host = site.claimed(&alice).await.host;
    let bmc_uuid = bmc_uuid(&site, &host).await;
    let bmc_system = format!("/redfish/v1/Systems/{bmc_uuid}");
    let ironic = Ironic::start(Duration::from_secs(3600)).await.unwrap();
    let system = format!("/redfish/v1/Systems/{host}");

    // Alice enrolls her host with Podium as its BMC and her token as the password.
    let node = ironic
        .node_create_with(&site.server.url, &system, "alice", &alice)
        .await
        .unwrap();
    ironic.provision(&node, "manage").await.unwrap();
    let managed = ironic_settles(&ironic, &node, "provision_state", "manageable").await;
    assert_eq!(
        managed["provision_state"],
        "manageable",
        "{managed}\n{}",
        ironic.log()
    );
    assert_eq!(managed["power_state"], "power off", "{managed}");

    // Power and the boot device reach the BMC behind Podium.
    ironic.power(&node, "power on").await.unwrap();
    let on = ironic_settles(&ironic, &node, "power_state", "power on").await;
    assert_eq!(on["power_state"], "power on", "{on}\n{}", ironic.log());
    assert_eq!(
        site.bmc.get_json(&bmc_system).await.unwrap()["PowerState"],
        "On"
    );
    ironic
        .request(
            Method::PUT,
            &format!("/nodes/{node}/management/boot_device"),
            Some(json!({"boot_device": "cdrom", "persistent": false})),
        )
        .await
        .unwrap();
    eventually(
        Duration::from_secs(30),
        "the BMC boots from CD next",
        || async {
            let s = site.bmc.get_json(&bmc_system).await.ok()?;
            (s["Boot"]["BootSourceOverrideTarget"] == "Cd").then_some(())
        },
    )
    .await;
    ironic.power(&node, "power off").await.unwrap();
    let off = ironic_settles(&ironic, &node, "power_state", "power off").await;
    assert_eq!(off["power_state"], "power off", "{off}\n{}", ironic.log());
    assert_eq!(
        site.bmc.get_json(&bmc_system).await.unwrap()["PowerState"],
        "Off"
    );

    // Bob's token does not reach Alice's host: his node never becomes manageable.
    let intruder = ironic
        .node_create_with(&site.server.url, &system, "bob", &bob)
        .await
        .unwrap();
    ironic.provision(&intruder, "manage").await.unwrap();
    let refused = ironic_settles(&ironic, &intruder, "provision_state", "manageable").await;
    assert_eq!(refused["provision_state"], "enroll", "{refused}");
    assert!(
        !refused["last_error"].as_str().unwrap_or("").is_empty(),
        "{refused}"
    );
    assert_eq!(
        site.bmc.get_json(&bmc_system).await.unwrap()["PowerState"],
        "Off"
    );
}

#[tokio::test]
async fn dmtf_redfish_utilities_against_podium() {
    let site = Site::start(1).await;
    let Tenant { token: alice, .. } = site.tenant("alice").await;
    let host = site.claimed(&alice).await.host;
    let bmc_uuid = bmc_uuid(&site, &host).await;
    let bmc_system = format!("/redfish/v1/Systems/{bmc_uuid}");
    let dir = tempfile::tempdir().unwrap();
    // Each of DMTF's redfish-utilities scripts, as Alice, against Podium; exit 0 and its output.
    let run = |tool: &'static str, extra: &[&str]| {
        let mut args = vec!["-u", "alice", "-p", &alice, "-r", &site.server.url];
        args.extend_from_slice(extra);
        let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        let dir = dir.path().to_owned();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_peer_tool(tool, &args, &dir).await.unwrap()
        }
    };
    let ok = |tool: &str, (status, out, err): (std::process::ExitStatus, String, String)| {
        assert!(status.success(), "{tool}: {status}\n{out}\n{err}");
        out
    };
    let inventory = ok("rf_sys_inventory.py", run("rf_sys_inventory.py", &[]).await);
    assert!(inventory.contains(host.as_str()), "{inventory}");
    ok(
        "rf_power_reset.py",
        run("rf_power_reset.py", &["-s", host.as_str(), "-t", "On"]).await,
    );
    assert_eq!(
        site.bmc.get_json(&bmc_system).await.unwrap()["PowerState"],
        "On"
    );
    ok(
        "rf_boot_override.py",
        run("rf_boot_override.py", &["-s", host.as_str(), "-t", "Cd"]).await,
    );
    let image = site.images.url("/utilities.iso");
    ok(
        "rf_virtual_media.py",
        run(
            "rf_virtual_media.py",
            &["-s", host.as_str(), "insert", "--image", &image],
        )
        .await,
    );
    eventually(
        Duration::from_secs(30),
        "the BMC shows the utilities' work",
        || async {
            let s = site.bmc.get_json(&bmc_system).await.ok()?;
            let cd = site
                .bmc
                .get_json(&format!("{bmc_system}/VirtualMedia/Cd"))
                .await
                .ok()?;
            (s["Boot"]["BootSourceOverrideTarget"] == "Cd" && cd["Image"] == image.as_str())
                .then_some(())
        },
    )
    .await;
    let info = ok(
        "rf_virtual_media.py",
        run("rf_virtual_media.py", &["-s", host.as_str(), "info"]).await,
    );
    assert!(info.contains("utilities.iso"), "{info}");
    // A script refused by the service fails as it would against a BMC.
    let (status, out, err) = run_peer_tool(
        "rf_power_reset.py",
        &[
            "-u",
            "bob",
            "-p",
            "pdm_not-a-token",
            "-r",
            &site.server.url,
            "-s",
            host.as_str(),
            "-t",
            "On",
        ],
        dir.path(),
    )
    .await
    .unwrap();
    assert!(!status.success(), "a bad token was accepted: {out}{err}");
}

/// DMTF's protocol validator, run as a tenant against the Redfish service over TLS, as a site
/// serves it: every assertion it tests passes.
#[tokio::test]
async fn dmtf_protocol_validator_finds_nothing_wrong_with_podium_over_tls() {
    let site = Site::on(
        TestServer::start_tls(quick).await,
        SushyConfig::with_systems(1),
    )
    .await;
    assert!(
        site.server.url.starts_with("https://"),
        "{}",
        site.server.url
    );
    let Tenant { token: alice, .. } = site.tenant("alice").await;
    site.claimed(&alice).await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("podium.pem");
    std::fs::write(&ca, site.server.certificate.as_ref().unwrap()).unwrap();
    let (status, out, err) = run_peer_tool(
        "rf_protocol_validator",
        &[
            "-u",
            "alice",
            "-p",
            &alice,
            "-r",
            &site.server.url,
            "--ca-bundle",
            ca.to_str().unwrap(),
            "--report-dir",
            "reports",
            "--report-type",
            "tsv",
        ],
        dir.path(),
    )
    .await
    .unwrap();
    let summary = out
        .lines()
        .find(|l| l.starts_with("Summary"))
        .unwrap_or_else(|| panic!("{status}: {out}\n{err}"));
    println!("redfish-protocol-validator 1.3.2 against Podium: {summary}");
    let report = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "tsv"))
        .expect("the validator's report");
    let report = std::fs::read_to_string(report).unwrap();
    let failed: Vec<&str> = report
        .lines()
        .filter(|l| l.split('\t').nth(4) == Some("FAIL"))
        .collect();
    for line in &failed {
        println!("  {line}");
    }
    assert!(
        failed.is_empty(),
        "the validator found what Podium should do: {failed:#?}"
    );
    let passed: Vec<&str> = report
        .lines()
        .filter(|l| l.split('\t').nth(4) == Some("PASS"))
        .collect();
    assert!(passed.len() >= 200, "{summary}");
    // What the plain-HTTP listener could not show, and the roles, are among what passed.
    for assertion in [
        "SEC_BASIC_AUTH_OVER_HTTPS",
        "SEC_SESSION_CREATE_HTTPS_ONLY",
        "SEC_PRIV_SUPPORT_PREDEFINED_ROLES",
    ] {
        assert!(
            passed
                .iter()
                .any(|l| l.starts_with(&format!("{assertion}\t"))),
            "{assertion} did not pass: {summary}"
        );
    }
}

/// The `AccountService`: each token is the one account its caller sees, with the standard
/// role its kind maps to; the roles are DMTF's three, with their standard privileges; nothing
/// there can be written.
#[tokio::test]
async fn the_account_service_shows_each_caller_its_own_account_and_the_standard_roles() {
    let site = Site::start(1).await;
    let Tenant {
        id: alice_id,
        token: alice,
        ..
    } = site.tenant("alice").await;
    let Tenant { token: bob, .. } = site.tenant("bob").await;
    let admin = site.server.admin();
    let read_only = admin
        .created(
            &format!("/v1/tenants/{alice_id}/tokens"),
            json!({"read_only": true}),
        )
        .await
        .body["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut accounts = Vec::new();
    for (token, user, role) in [
        (alice.as_str(), "alice", "Operator"),
        (read_only.as_str(), "alice", "ReadOnly"),
        (bob.as_str(), "bob", "Operator"),
        (podium_tests::ADMIN_TOKEN, "admin", "Administrator"),
    ] {
        let listed = get(
            &site,
            "/redfish/v1/AccountService/Accounts",
            Auth::Basic(token),
        )
        .await;
        assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
        let members = members(&listed);
        assert_eq!(members.len(), 1, "the caller alone: {}", listed.text);
        let account = get(&site, &members[0], Auth::Basic(token)).await;
        assert_eq!(account.status, StatusCode::OK, "{}", account.text);
        assert_eq!(account.body["UserName"], user, "{}", account.text);
        assert_eq!(account.body["RoleId"], role, "{}", account.text);
        assert_eq!(account.body["Password"], Value::Null, "{}", account.text);
        assert!(
            !account.text.contains(token),
            "the token is shown: {}",
            account.text
        );
        let role_of = get(
            &site,
            account.body["Links"]["Role"]["@odata.id"].as_str().unwrap(),
            Auth::Basic(token),
        )
        .await;
        assert_eq!(role_of.body["Id"], role, "{}", role_of.text);
        accounts.push(members[0].clone());
    }
    // Another's account does not exist for a caller, the admin's included.
    for (token, other) in [
        (bob.as_str(), &accounts[0]),
        (podium_tests::ADMIN_TOKEN, &accounts[0]),
        (alice.as_str(), &accounts[3]),
    ] {
        let a = get(&site, other, Auth::Basic(token)).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{other}: {}", a.text);
    }
    // The standard roles, as DMTF defines them.
    let roles = members(
        &get(
            &site,
            "/redfish/v1/AccountService/Roles",
            Auth::Basic(&alice),
        )
        .await,
    );
    let mut seen = std::collections::BTreeMap::new();
    for uri in roles {
        let role = get(&site, &uri, Auth::Basic(&alice)).await;
        assert_eq!(role.body["IsPredefined"], true, "{}", role.text);
        seen.insert(
            role.body["Id"].as_str().unwrap().to_owned(),
            role.body["AssignedPrivileges"].clone(),
        );
    }
    assert_eq!(
        seen,
        [
            (
                "Administrator".to_owned(),
                json!([
                    "Login",
                    "ConfigureManager",
                    "ConfigureUsers",
                    "ConfigureComponents",
                    "ConfigureSelf"
                ])
            ),
            (
                "Operator".to_owned(),
                json!(["Login", "ConfigureComponents", "ConfigureSelf"])
            ),
            ("ReadOnly".to_owned(), json!(["Login", "ConfigureSelf"])),
        ]
        .into()
    );
    // Nothing there is written: accounts are tokens, made through Podium's API.
    let patched = redfish(
        &site,
        Method::PATCH,
        "/redfish/v1/AccountService/Roles/ReadOnly",
        Auth::Basic(podium_tests::ADMIN_TOKEN),
        &[],
        Some(r#"{"AssignedPrivileges": ["Login"]}"#),
    )
    .await;
    assert_eq!(
        patched.status,
        StatusCode::METHOD_NOT_ALLOWED,
        "{}",
        patched.text
    );
    let created = post(
        &site,
        "/redfish/v1/AccountService/Accounts",
        Auth::Basic(podium_tests::ADMIN_TOKEN),
        json!({"UserName": "mallory", "Password": "x", "RoleId": "Administrator"}),
    )
    .await;
    assert_eq!(
        created.status,
        StatusCode::METHOD_NOT_ALLOWED,
        "{}",
        created.text
    );
}

/// Every route of the Redfish service, as (method, path) with `{system}`, `{nic}`, `{slot}`,
/// `{task}` and `{session}` to fill in. Kept beside `allowed()` in the server's `redfish.rs`.
const ROUTES: [(&str, &str); 41] = [
    ("GET", "/redfish/v1/SessionService"),
    ("GET", "/redfish/v1/SessionService/Sessions"),
    ("GET", "/redfish/v1/SessionService/Sessions/{session}"),
    ("DELETE", "/redfish/v1/SessionService/Sessions/{session}"),
    ("GET", "/redfish/v1/Systems"),
    ("GET", "/redfish/v1/Systems/{system}"),
    ("PATCH", "/redfish/v1/Systems/{system}"),
    (
        "POST",
        "/redfish/v1/Systems/{system}/Actions/ComputerSystem.Reset",
    ),
    ("GET", "/redfish/v1/Systems/{system}/EthernetInterfaces"),
    (
        "GET",
        "/redfish/v1/Systems/{system}/EthernetInterfaces/{nic}",
    ),
    ("GET", "/redfish/v1/Systems/{system}/VirtualMedia"),
    ("GET", "/redfish/v1/Systems/{system}/VirtualMedia/{slot}"),
    (
        "POST",
        "/redfish/v1/Systems/{system}/VirtualMedia/{slot}/Actions/VirtualMedia.InsertMedia",
    ),
    (
        "POST",
        "/redfish/v1/Systems/{system}/VirtualMedia/{slot}/Actions/VirtualMedia.EjectMedia",
    ),
    ("GET", "/redfish/v1/Chassis"),
    ("GET", "/redfish/v1/Chassis/{system}"),
    ("GET", "/redfish/v1/Managers"),
    ("GET", "/redfish/v1/Managers/{system}"),
    ("GET", "/redfish/v1/Managers/{system}/VirtualMedia"),
    ("GET", "/redfish/v1/Managers/{system}/VirtualMedia/{slot}"),
    (
        "POST",
        "/redfish/v1/Managers/{system}/VirtualMedia/{slot}/Actions/VirtualMedia.InsertMedia",
    ),
    (
        "POST",
        "/redfish/v1/Managers/{system}/VirtualMedia/{slot}/Actions/VirtualMedia.EjectMedia",
    ),
    // `Accounts/{id}` is each caller's own: `the_account_service_...` reads it.
    ("GET", "/redfish/v1/AccountService"),
    ("GET", "/redfish/v1/AccountService/Accounts"),
    ("GET", "/redfish/v1/AccountService/Roles"),
    ("GET", "/redfish/v1/AccountService/Roles/ReadOnly"),
    ("GET", "/redfish/v1/TaskService"),
    ("GET", "/redfish/v1/TaskService/Tasks"),
    ("GET", "/redfish/v1/TaskService/Tasks/{task}"),
    ("GET", "/redfish/v1/TaskService/TaskMonitors/{task}"),
    ("GET", "/redfish/v1/UpdateService"),
    ("GET", "/redfish/v1/EventService"),
    ("GET", "/redfish/v1/EventService/Subscriptions"),
    ("POST", "/redfish/v1/EventService/Subscriptions"),
    (
        "GET",
        "/redfish/v1/EventService/Subscriptions/{subscription}",
    ),
    (
        "DELETE",
        "/redfish/v1/EventService/Subscriptions/{subscription}",
    ),
    // Open to anyone, as Redfish requires.
    ("GET", "/redfish"),
    ("GET", "/redfish/v1"),
    ("GET", "/redfish/v1/"),
    ("GET", "/redfish/v1/odata"),
    ("GET", "/redfish/v1/$metadata"),
];

/// A valid body for a write route.
fn body_for(method: &str, path: &str, image: &str) -> Option<String> {
    let body = match method {
        "PATCH" => {
            json!({"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}})
        }
        "POST" if path.ends_with("ComputerSystem.Reset") => json!({"ResetType": "ForceRestart"}),
        "POST" if path.ends_with("InsertMedia") => json!({"Image": image}),
        // A name this machine never resolves: nothing is delivered.
        "POST" if path.ends_with("Subscriptions") => {
            json!({"Destination": "https://events.example.invalid/sweep"})
        }
        "POST" => json!({}),
        _ => return None,
    };
    Some(body.to_string())
}

#[tokio::test]
async fn every_redfish_route_answers_each_kind_of_caller_as_it_should() {
    let site = Site::start(2).await;
    let Tenant {
        id: alice_id,
        token: alice,
        ..
    } = site.tenant("alice").await;
    let Tenant { token: bob, .. } = site.tenant("bob").await;
    // Bob holds a host of his own: his collections are not empty, and never show Alice's.
    site.claimed(&bob).await;
    let podium_tests::site::Claimed { id: claim_id, host } = site.claimed(&alice).await;
    let admin = site.server.admin();
    let read_only = admin
        .created(
            &format!("/v1/tenants/{alice_id}/tokens"),
            json!({"read_only": true}),
        )
        .await
        .body["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let system = format!("/redfish/v1/Systems/{host}");
    let nic = members(
        &get(
            &site,
            &format!("{system}/EthernetInterfaces"),
            Auth::Basic(&alice),
        )
        .await,
    )[0]
    .rsplit('/')
    .next()
    .unwrap()
    .to_owned();
    let on = post(
        &site,
        &format!("{system}/Actions/ComputerSystem.Reset"),
        Auth::Basic(&alice),
        json!({"ResetType": "On"}),
    )
    .await;
    let task = on.body["Id"].as_str().unwrap().to_owned();
    finished(&site, &on, Auth::Basic(&alice)).await;
    let opened = post(
        &site,
        "/redfish/v1/SessionService/Sessions",
        Auth::None,
        json!({"UserName": "alice", "Password": alice}),
    )
    .await;
    let session = opened.body["Id"].as_str().unwrap().to_owned();
    let subscribed = post(
        &site,
        "/redfish/v1/EventService/Subscriptions",
        Auth::Basic(&alice),
        json!({"Destination": "https://events.example.invalid/alice"}),
    )
    .await;
    assert_eq!(
        subscribed.status,
        StatusCode::CREATED,
        "{}",
        subscribed.text
    );
    let subscription = subscribed.body["Id"].as_str().unwrap().to_owned();
    let image = site.images.url("/sweep.iso");
    let fill = |path: &str| {
        path.replace("{system}", host.as_str())
            .replace("{nic}", &nic)
            .replace("{slot}", "Cd")
            .replace("{task}", &task)
            .replace("{session}", &session)
            .replace("{subscription}", &subscription)
    };
    let open = |path: &str| {
        !path.contains("/v1/")
            || path == "/redfish/v1/"
            || path.ends_with("odata")
            || path.ends_with("$metadata")
    };
    let send = |method: &'static str, path: String, auth: Auth<'static>| {
        let site = &site;
        let image = image.clone();
        async move {
            let body = body_for(method, &path, &image);
            redfish(
                site,
                method.parse().unwrap(),
                &path,
                auth,
                &[],
                body.as_deref(),
            )
            .await
        }
    };
    // Leaked for the sweep's borrowed `Auth`s: a test process.
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let (alice, bob, read_only) = (leak(&alice), leak(&bob), leak(&read_only));
    let mut checked = 0;
    for (method, template) in ROUTES {
        let path = fill(template);
        let scoped = template.contains('{');
        // No credentials, malformed ones, an unknown token: 401 (open routes answer anyone).
        for auth in [
            Auth::None,
            Auth::Basic("pdm_unknown-token"),
            Auth::Session("not-a-session"),
        ] {
            let a = send(method, path.clone(), auth).await;
            if open(template) {
                assert_eq!(a.status, StatusCode::OK, "{method} {path}: {}", a.text);
            } else {
                assert_eq!(
                    a.status,
                    StatusCode::UNAUTHORIZED,
                    "{method} {path}: {}",
                    a.text
                );
                assert_eq!(a.message_id(), "Base.1.8.NoValidSession", "{method} {path}");
            }
            checked += 1;
        }
        if open(template) {
            continue;
        }
        // Another tenant: Alice's system, its task and her session do not exist for Bob.
        let a = send(method, path.clone(), Auth::Basic(bob)).await;
        if scoped {
            assert_eq!(
                a.status,
                StatusCode::NOT_FOUND,
                "bob: {method} {path}: {}",
                a.text
            );
        } else {
            assert!(a.status.is_success(), "bob: {method} {path}: {}", a.text);
            assert!(
                !a.text.contains(host.as_str()),
                "bob sees Alice's host at {path}: {}",
                a.text
            );
        }
        // A read-only token of Alice's: reads, and is refused any write.
        let a = send(method, path.clone(), Auth::Basic(read_only)).await;
        if method == "GET" {
            assert!(
                a.status.is_success(),
                "read-only: {method} {path}: {}",
                a.text
            );
        } else {
            assert_eq!(
                a.status,
                StatusCode::FORBIDDEN,
                "read-only: {method} {path}: {}",
                a.text
            );
            assert_eq!(a.message_id(), "Base.1.8.InsufficientPrivilege");
        }
        // Alice and the admin read everything of hers.
        if method == "GET" {
            for (who, auth) in [
                ("alice", Auth::Basic(alice)),
                ("admin", Auth::Basic(podium_tests::ADMIN_TOKEN)),
            ] {
                let a = send(method, path.clone(), auth).await;
                assert!(a.status.is_success(), "{who}: {method} {path}: {}", a.text);
            }
        }
        checked += 3;
    }
    assert!(checked > 100, "{checked}");

    // Alice's writes go through (her session is ended last, by her).
    for (method, template) in ROUTES.iter().filter(|(m, _)| *m != "GET") {
        let path = fill(template);
        let a = send(method, path.clone(), Auth::Basic(alice)).await;
        assert!(a.status.is_success(), "alice: {method} {path}: {}", a.text);
    }
    // A claim released mid-session: its system is gone from the session at once.
    let opened = post(
        &site,
        "/redfish/v1/SessionService/Sessions",
        Auth::None,
        json!({"UserName": "alice", "Password": alice}),
    )
    .await;
    let token = opened.header("x-auth-token").to_owned();
    assert_eq!(
        get(&site, &system, Auth::Session(leak(&token)))
            .await
            .status,
        StatusCode::OK
    );
    site.server
        .client(Some(alice))
        .send(Method::DELETE, &format!("/v1/claims/{claim_id}"), None)
        .await;
    assert_eq!(
        get(&site, &system, Auth::Session(leak(&token)))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

/// What a tenant's sushy (the library Ironic reads a BMC with) reads of its claimed host beyond
/// the summary, through Podium, from sushy-tools' libvirt driver behind it: the BIOS typed by
/// an attribute registry it finds under `Registries` as it finds a BMC's, secure boot, the
/// processors, the storage. Each new resource answers only the caller who may drive the host:
/// 401 without credentials, 404 to another tenant, and a read-only token may read it.
#[tokio::test]
async fn a_tenants_sushy_reads_its_hosts_bios_and_parts_through_podium() {
    let site = Site::start_with(crate::bios::libvirt_config(), |_| {}).await;
    let Tenant {
        token: alice,
        id: alice_id,
        ..
    } = site.tenant("alice").await;
    let Tenant { token: bob, .. } = site.tenant("bob").await;
    let host = site.claimed(&alice).await.host;
    let out = run_peer_script(
        "redfish_hardware.py",
        &[&site.server.url, &alice, host.as_str()],
    )
    .await
    .unwrap();
    let seen: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(seen["attributes"]["ProcTurboMode"], "Enabled", "{seen}");
    assert_eq!(
        seen["attributes"]["QuietBoot"], true,
        "typed by the registry: {seen}"
    );
    assert_eq!(seen["attributes"]["NumCores"], 10, "{seen}");
    assert_eq!(seen["attributes"]["SysPassword"], Value::Null, "{seen}");
    assert_eq!(seen["pending"], json!({}), "{seen}");
    assert_eq!(
        seen["registry_id"],
        format!("BiosAttributeRegistry.{host}"),
        "{seen}"
    );
    // The site lets its tenants change nothing: every attribute is read-only to Alice.
    assert_eq!(
        seen["registry"]["ProcTurboMode"],
        json!({"type": "Enumeration", "read_only": true, "values": ["Enabled", "Disabled"]}),
        "{seen}"
    );
    assert_eq!(seen["registry"]["NumCores"]["read_only"], true, "{seen}");
    // sushy-tools' two vCPUs, one thread each.
    assert_eq!(
        seen["processors"],
        json!({"count": 2, "architecture": "x86"}),
        "{seen}"
    );
    assert_eq!(seen["secure_boot"], false, "{seen}");

    let read_only = site
        .admin
        .created(
            &format!("/v1/tenants/{alice_id}/tokens"),
            json!({"read_only": true}),
        )
        .await
        .body["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let system = format!("/redfish/v1/Systems/{host}");
    let cpu = members(&get(&site, &format!("{system}/Processors"), Auth::Basic(&alice)).await);
    assert_eq!(cpu.len(), 2, "{cpu:?}");
    let registry = format!("/redfish/v1/Registries/BiosAttributeRegistry.{host}");
    for path in [
        format!("{system}/Bios"),
        format!("{system}/Bios/Settings"),
        format!("{system}/SecureBoot"),
        format!("{system}/Processors"),
        cpu[0].clone(),
        format!("{system}/Memory"),
        format!("{system}/SimpleStorage"),
        format!("{system}/Storage"),
        registry.clone(),
        format!("{registry}/en"),
    ] {
        assert_eq!(
            get(&site, &path, Auth::None).await.status,
            StatusCode::UNAUTHORIZED,
            "{path}"
        );
        let a = get(&site, &path, Auth::Basic(&bob)).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "bob: {path}: {}", a.text);
        for (who, token) in [("alice", &alice), ("read-only", &read_only)] {
            let a = get(&site, &path, Auth::Basic(token)).await;
            assert_eq!(a.status, StatusCode::OK, "{who}: {path}: {}", a.text);
            assert!(
                !a.text.contains(crate::bios::TEST_DOMAIN),
                "the BMC's system is never named: {path}: {}",
                a.text
            );
        }
    }
    // Bob's registries list nothing of Alice's.
    let listed = members(&get(&site, "/redfish/v1/Registries", Auth::Basic(&bob)).await);
    assert!(listed.is_empty(), "{listed:?}");
    let listed = members(&get(&site, "/redfish/v1/Registries", Auth::Basic(&alice)).await);
    assert_eq!(listed, [registry], "{listed:?}");
}

/// Unmodified Ironic with the tenant's token reads its claimed host's BIOS through Podium when
/// it manages the node (`GET /v1/nodes/{node}/bios`, the settings typed by the registry it
/// found under `Registries`) and inspects it with its `redfish` inspect interface: the node's
/// properties come from Podium's answers (the memory, the processors' architecture).
#[tokio::test]
async fn unmodified_ironic_inspects_and_lists_the_bios_of_a_claimed_host_through_podium() {
    let site = Site::start_with(crate::bios::libvirt_config(), |_| {}).await;
    let Tenant { token: alice, .. } = site.tenant("alice").await;
    let host = site.claimed(&alice).await.host;
    let ironic = Ironic::start(Duration::from_secs(3600)).await.unwrap();
    let system = format!("/redfish/v1/Systems/{host}");
    let node = ironic
        .node_create_with_interfaces(
            json!({"bios_interface": "redfish", "inspect_interface": "redfish"}),
            &site.server.url,
            &system,
            "alice",
            &alice,
        )
        .await
        .unwrap();
    ironic.provision(&node, "manage").await.unwrap();
    let managed = ironic_settles(&ironic, &node, "provision_state", "manageable").await;
    assert_eq!(
        managed["provision_state"],
        "manageable",
        "{managed}\n{}",
        ironic.log()
    );

    let bios = eventually(
        Duration::from_secs(60),
        "Ironic's BIOS settings of the node",
        || async {
            let listed = ironic
                .request(
                    Method::GET,
                    &format!("/nodes/{node}/bios?detail=true"),
                    None,
                )
                .await
                .ok()?;
            let settings = listed["bios"].as_array()?.clone();
            (!settings.is_empty()).then_some(settings)
        },
    )
    .await;
    let setting = |name: &str| {
        bios.iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {bios:?}"))
            .clone()
    };
    assert_eq!(setting("ProcTurboMode")["value"], "Enabled");
    assert_eq!(
        setting("ProcTurboMode")["allowable_values"],
        json!(["Enabled", "Disabled"])
    );
    assert_eq!(setting("NumCores")["read_only"], true);

    ironic.provision(&node, "inspect").await.unwrap();
    let inspected = eventually(Duration::from_secs(120), "the inspection's end", || async {
        let n = ironic_node(&ironic, &node).await;
        (n["provision_state"] != "inspecting" && n["provision_state"] != "inspect wait")
            .then_some(n)
    })
    .await;
    assert_eq!(
        inspected["provision_state"],
        "manageable",
        "{inspected}\n{}",
        ironic.log()
    );
    // sushy-tools' test domain: 8 GiB, x86-64 vCPUs; no disk it can size.
    assert_eq!(inspected["properties"]["memory_mb"], 8192, "{inspected}");
    assert_eq!(inspected["properties"]["cpu_arch"], "x86_64", "{inspected}");
}

/// Unmodified Ironic with the tenant's token applies a BIOS setting to its claimed host in a
/// manual cleaning (`bios.apply_configuration`, no ramdisk): it PATCHes `Bios/Settings` and
/// reboots the node through Podium, then finds the setting applied, as the BMC's own view shows.
/// The attribute the site does not let tenants change is read-only in Ironic's cache, and Ironic
/// refuses a cleaning that asks for it before it sends anything.
#[tokio::test]
async fn unmodified_ironic_applies_a_bios_setting_to_a_claimed_host_in_manual_cleaning() {
    let site = Site::start_with(crate::bios::libvirt_config(), |_| {}).await;
    let allowed = site
        .admin
        .patch(
            &format!("/v1/pod_managers/{}", site.pm),
            json!({"tenant_firmware": {"bios_attributes": ["ProcTurboMode"]}}),
        )
        .await;
    assert_eq!(allowed.status, StatusCode::OK, "{}", allowed.text);
    let Tenant { token: alice, .. } = site.tenant("alice").await;
    let host = site.claimed(&alice).await.host;
    let ironic = Ironic::start(Duration::from_secs(3600)).await.unwrap();
    let system = format!("/redfish/v1/Systems/{host}");
    let node = ironic
        .node_create_with_interfaces(
            json!({"bios_interface": "redfish", "inspect_interface": "redfish"}),
            &site.server.url,
            &system,
            "alice",
            &alice,
        )
        .await
        .unwrap();
    ironic.provision(&node, "manage").await.unwrap();
    let managed = ironic_settles(&ironic, &node, "provision_state", "manageable").await;
    assert_eq!(
        managed["provision_state"],
        "manageable",
        "{managed}\n{}",
        ironic.log()
    );
    let cached = eventually(Duration::from_secs(60), "Ironic's BIOS cache", || async {
        let listed = ironic
            .request(
                Method::GET,
                &format!("/nodes/{node}/bios?detail=true"),
                None,
            )
            .await
            .ok()?;
        let settings = listed["bios"].as_array()?.clone();
        (!settings.is_empty()).then_some(settings)
    })
    .await;
    let read_only = |name: &str| {
        cached
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {cached:?}"))["read_only"]
            .clone()
    };
    assert_eq!(read_only("ProcTurboMode"), false);
    assert_eq!(read_only("QuietBoot"), true);

    let clean = |name: &str, value: &str| {
        json!({"target": "clean", "disable_ramdisk": true, "clean_steps": [{
            "interface": "bios", "step": "apply_configuration",
            "args": {"settings": [{"name": name, "value": value}]}}]})
    };
    ironic
        .request(
            Method::PUT,
            &format!("/nodes/{node}/states/provision"),
            Some(clean("ProcTurboMode", "Disabled")),
        )
        .await
        .unwrap();
    let done = cleaning_ends(&ironic, &node).await;
    assert_eq!(
        done["provision_state"],
        "manageable",
        "{done}\n{}",
        ironic.log()
    );
    assert!(done["last_error"].is_null(), "{done}");
    let attributes = crate::bios::bmc_attributes(&site.bmc).await;
    assert_eq!(attributes["ProcTurboMode"], "Disabled", "{attributes}");

    // QuietBoot is not the tenant's: Ironic's own check of its cache refuses the step.
    ironic
        .request(
            Method::PUT,
            &format!("/nodes/{node}/states/provision"),
            Some(clean("QuietBoot", "false")),
        )
        .await
        .unwrap();
    let failed = cleaning_ends(&ironic, &node).await;
    assert_eq!(failed["provision_state"], "clean failed", "{failed}");
    assert!(
        failed["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("QuietBoot")),
        "{failed}"
    );
    let attributes = crate::bios::bmc_attributes(&site.bmc).await;
    assert_ne!(attributes["QuietBoot"], "False", "{attributes}");
}

/// Unmodified Ironic with the tenant's token updates its claimed host's BIOS in servicing, with
/// its `redfish` firmware interface: it adopts the node (`active` without a deploy), then its
/// `firmware.update` step sends `SimpleUpdate` to Podium's `UpdateService` and follows the task
/// Podium answers to its end. Until the site allows tenants' updates the step fails with Podium's
/// refusal and nothing reaches the BMC; once allowed, the BMC's own view shows the image's BIOS
/// version, so does Ironic's list of the node's firmware (read from Podium's system and manager
/// after the update), and the update is an operation of the claim.
#[tokio::test]
async fn unmodified_ironic_updates_a_claimed_hosts_bios_in_servicing() {
    let site = Site::start_with(crate::bios::libvirt_config(), |_| {}).await;
    let Tenant { token: alice, .. } = site.tenant("alice").await;
    let podium_tests::site::Claimed { id: claim, host } = site.claimed(&alice).await;
    // The inspection read the firmware versions the system and its manager show.
    let system = format!("/redfish/v1/Systems/{host}");
    let before = get(&site, &system, Auth::Basic(&alice)).await;
    assert_eq!(before.body["BiosVersion"], "1.0.0", "{}", before.text);
    let ironic = Ironic::start(Duration::from_secs(3600)).await.unwrap();
    let node = ironic
        .node_create_with_interfaces(
            json!({"firmware_interface": "redfish"}),
            &site.server.url,
            &system,
            "alice",
            &alice,
        )
        .await
        .unwrap();
    ironic.provision(&node, "manage").await.unwrap();
    let managed = ironic_settles(&ironic, &node, "provision_state", "manageable").await;
    assert_eq!(
        managed["provision_state"],
        "manageable",
        "{managed}\n{}",
        ironic.log()
    );
    // Adopted as it runs: the `ramdisk` deploy interface takes over a node booting `boot_iso`.
    ironic
        .request(
            Method::PATCH,
            &format!("/nodes/{node}"),
            Some(json!([{"op": "add", "path": "/instance_info/boot_iso",
                         "value": site.images.url("/os.iso")}])),
        )
        .await
        .unwrap();
    ironic.provision(&node, "adopt").await.unwrap();
    let adopted = ironic_settles(&ironic, &node, "provision_state", "active").await;
    assert_eq!(
        adopted["provision_state"],
        "active",
        "{adopted}\n{}",
        ironic.log()
    );

    let service = json!({"target": "service", "service_steps": [{
        "interface": "firmware", "step": "update",
        "args": {"settings": [{"component": "bios", "url": site.images.url("/bios-1.1.0.bin")}]}}]});
    let path = format!("/nodes/{node}/states/provision");
    ironic
        .request(Method::PUT, &path, Some(service.clone()))
        .await
        .unwrap();
    let refused = servicing_ends(&ironic, &node).await;
    assert_eq!(refused["provision_state"], "service failed", "{refused}");
    assert!(
        refused["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("update firmware")),
        "{refused}"
    );
    assert_eq!(
        crate::bios::bmc_view(&site.bmc, "").await["BiosVersion"],
        "1.0.0"
    );

    let allowed = site
        .admin
        .patch(
            &format!("/v1/pod_managers/{}", site.pm),
            json!({"tenant_firmware": {"firmware_update": true}}),
        )
        .await;
    assert_eq!(allowed.status, StatusCode::OK, "{}", allowed.text);
    // Ironic puts a node whose servicing failed in maintenance; its user takes it out.
    assert_eq!(refused["maintenance"], true, "{refused}");
    ironic
        .request(Method::DELETE, &format!("/nodes/{node}/maintenance"), None)
        .await
        .unwrap();
    ironic
        .request(Method::PUT, &path, Some(service))
        .await
        .unwrap();
    let done = servicing_ends(&ironic, &node).await;
    assert_eq!(
        done["provision_state"],
        "active",
        "{done}\n{}",
        ironic.log()
    );
    assert!(done["last_error"].is_null(), "{done}");
    assert_eq!(
        crate::bios::bmc_view(&site.bmc, "").await["BiosVersion"],
        "1.1.0"
    );
    // Ironic's list of the node's firmware, from what Podium's system and manager show.
    let firmware = ironic
        .request(Method::GET, &format!("/nodes/{node}/firmware"), None)
        .await
        .unwrap();
    let version = |component: &str| {
        firmware["firmware"]
            .as_array()
            .and_then(|all| all.iter().find(|c| c["component"] == component))
            .unwrap_or_else(|| panic!("no {component} in Ironic's firmware list: {firmware}"))
            ["current_version"]
            .clone()
    };
    assert_eq!(version("bios"), "1.1.0", "{firmware}");
    assert_eq!(
        version("bmc"),
        site.bmc
            .get_json(&format!(
                "/redfish/v1/Managers/{}",
                crate::bios::TEST_DOMAIN
            ))
            .await
            .unwrap()["FirmwareVersion"],
        "{firmware}"
    );
    let ops = site
        .server
        .client(Some(&alice))
        .get(&format!("/v1/claims/{claim}/operations"))
        .await;
    assert!(
        ops.body["items"].as_array().is_some_and(|all| all
            .iter()
            .any(|op| op["kind"] == "firmware_update" && op["status"] == "succeeded")),
        "{}",
        ops.text
    );
}

/// Waits until Ironic's `what` of `node` ends: back in `settled` with no target, or in
/// `failed` (a failed step keeps its target).
async fn ironic_step_ends(
    ironic: &Ironic,
    node: &str,
    (settled, failed): (&str, &str),
    what: &str,
) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    loop {
        let n = ironic_node(ironic, node).await;
        let done = n["provision_state"] == failed
            || (n["provision_state"] == settled && n["target_provision_state"].is_null());
        if done {
            return n;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Ironic's {what} did not end in 180 s: {n}\n{}",
            ironic.log()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Ironic's servicing of `node` ended (`active`, or `service failed`).
async fn servicing_ends(ironic: &Ironic, node: &str) -> Value {
    ironic_step_ends(ironic, node, ("active", "service failed"), "servicing").await
}

/// Ironic's cleaning of `node` ended (back in `manageable`, or `clean failed`).
async fn cleaning_ends(ironic: &Ironic, node: &str) -> Value {
    ironic_step_ends(ironic, node, ("manageable", "clean failed"), "cleaning").await
}

/// A client walks a system's inventory one resource at a time (the `Processors` collection,
/// each processor, the memory and storage collections, as Ironic's inspection does): Podium
/// answers the whole walk from one read of the BMC, counted at a proxy in front of it, where a
/// read for each resource would cost as many reads as there are resources.
#[tokio::test]
async fn a_walk_of_a_systems_inventory_reads_its_bmc_once() {
    let emulator = crate::bios::libvirt_bmc().await;
    let bmc = podium_tests::FaultProxy::start(&emulator.url()).await;
    let server = TestServer::start().await;
    let admin = server.admin();
    let host = admin.available_host(&bmc.url(), 1).await;
    let pm = host.pod_manager.to_string();
    let (_, token) = admin.granted_tenant("alice", &pm).await;
    let claim = server
        .client(Some(&token))
        .created(
            "/v1/claims",
            json!({"pod_manager": pm, "image": {"url": "http://127.0.0.1:9/os.iso"}, "online": false}),
        )
        .await;
    assert_eq!(claim.body["state"], "bound", "{}", claim.text);
    let sent = || bmc.requests.load(std::sync::atomic::Ordering::SeqCst);

    // One read of the inventory, as the admin's API makes it: what it costs at the BMC.
    let before = sent();
    let read = admin.get(&format!("/v1/hosts/{}/hardware", host.id)).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let one_read = sent() - before;
    assert!(one_read > 3, "{one_read}");

    let system = format!("/redfish/v1/Systems/{}", host.id);
    let base = server.url.clone();
    let http = reqwest::Client::new();
    let fetch = |path: String| {
        let (http, base, token) = (http.clone(), base.clone(), token.clone());
        async move {
            let reply = http
                .get(format!("{base}{path}"))
                .basic_auth("alice", Some(token))
                .send()
                .await
                .unwrap();
            assert_eq!(reply.status(), StatusCode::OK, "{path}");
            reply.json::<Value>().await.unwrap()
        }
    };
    let before = sent();
    let processors = fetch(format!("{system}/Processors")).await;
    let mut walked = 1;
    for member in processors["Members"].as_array().unwrap() {
        fetch(member["@odata.id"].as_str().unwrap().to_owned()).await;
        walked += 1;
    }
    for part in ["Memory", "SimpleStorage", "Storage"] {
        fetch(format!("{system}/{part}")).await;
        walked += 1;
    }
    assert!(walked >= 6, "{walked}");
    // One read, where there would be one a resource (a background probe of the site may add a
    // request or two).
    let walk = sent() - before;
    assert!(
        walk < 2 * one_read,
        "{walked} resources cost {walk} requests at the BMC; one read costs {one_read}"
    );
}
