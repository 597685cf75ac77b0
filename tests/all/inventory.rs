//! A host's full inventory through the admin API (`GET /v1/hosts/{id}/hardware`): DMTF's
//! `public-rackmount1` served by `sushy-static` (every part, some slots and bays empty), and
//! sushy-tools' libvirt driver on `test:///default` (processors and a NIC; a `Memory` link it
//! answers with a 404 and a `Storage` it cannot read, which leave those parts empty).

use podium_tests::TestServer;
use podium_tests::sushy::SushyStatic;
use podium_types::{HardwareInventory, LinkState};
use reqwest::StatusCode;

async fn inventory(server: &TestServer, url: &str) -> HardwareInventory {
    let admin = server.admin();
    let host = admin.available_host(url, 1).await;
    let read = admin.get(&format!("/v1/hosts/{}/hardware", host.id)).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    read.view()
}

/// Every part DMTF's rack server reports, as it reports it; what is absent is left out.
#[tokio::test]
async fn a_rack_servers_full_inventory_is_read_part_by_part() {
    let bmc = SushyStatic::start(&podium_tests::composition::mockup("public-rackmount1"))
        .await
        .expect("sushy-static starts");
    let server = TestServer::start().await;
    let hw = inventory(&server, &bmc.url()).await;

    let ids: Vec<&str> = hw.processors.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        ["CPU1", "FPGA1"],
        "the empty socket is left out: {hw:#?}"
    );
    let cpu = &hw.processors[0];
    assert_eq!(cpu.cores, Some(8));
    assert_eq!(cpu.threads, Some(16));
    assert_eq!(cpu.instruction_set.as_deref(), Some("x86-64"));
    assert_eq!(cpu.max_speed_mhz, Some(3700));
    assert_eq!(hw.processors[1].processor_type.as_deref(), Some("FPGA"));

    let dimms: Vec<(&str, Option<u64>)> = hw
        .memory
        .iter()
        .map(|m| (m.id.as_str(), m.capacity_mib))
        .collect();
    assert_eq!(
        dimms,
        [
            ("DIMM1", Some(32768)),
            ("DIMM2", Some(32768)),
            ("DIMM3", Some(32768))
        ],
        "{hw:#?}"
    );
    assert_eq!(hw.memory[0].device_type.as_deref(), Some("DDR4"));

    assert_eq!(hw.storage.len(), 1, "{hw:#?}");
    let sizes: Vec<Option<u64>> = hw.storage[0]
        .drives
        .iter()
        .map(|d| d.capacity_bytes)
        .collect();
    assert_eq!(
        sizes,
        [Some(8_000_000_000_000), Some(4_000_000_000_000)],
        "the empty bays are left out"
    );

    let nic = hw
        .nics
        .iter()
        .find(|n| n.id == "12446A3B0411")
        .unwrap_or_else(|| panic!("{hw:#?}"));
    assert_eq!(nic.mac.as_deref(), Some("12:44:6a:3b:04:11"));
    assert_eq!(nic.link, Some(LinkState::Up));
    assert_eq!(nic.speed_mbps, Some(1000));
    let to_manager = hw.nics.iter().find(|n| n.id == "ToManager").unwrap();
    assert_eq!(to_manager.link, None, "no LinkStatus, no link state");
}

/// sushy-tools' libvirt driver: its two vCPUs (cores sent as strings), its NIC; the `Memory`
/// it links but answers with a 404, and the `Storage` it cannot read, are empty, not a failure.
#[tokio::test]
async fn sushy_tools_inventory_has_its_processors_and_nic_and_no_memory() {
    let bmc = crate::bios::libvirt_bmc().await;
    let server = TestServer::start().await;
    let hw = inventory(&server, &bmc.url()).await;
    assert_eq!(hw.processors.len(), 2, "{hw:#?}");
    assert!(
        hw.processors
            .iter()
            .all(|p| p.cores == Some(1) && p.instruction_set.as_deref() == Some("x86-64")),
        "{hw:#?}"
    );
    assert!(hw.memory.is_empty(), "{hw:#?}");
    // Its `SimpleStorage` lists no controller (the domain's disk is no pool volume), and its
    // `Storage` answers a 500 unless configured.
    assert!(hw.storage.is_empty(), "{hw:#?}");
    let macs: Vec<_> = hw.nics.iter().filter_map(|n| n.mac.as_deref()).collect();
    assert_eq!(macs, ["aa:bb:cc:dd:ee:ff"], "{hw:#?}");
}
