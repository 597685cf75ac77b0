//! The site most tests start from: a Podium server, a sushy-tools emulator registered with it as
//! a pod manager (behind HTTP Basic, with [`BMC_PASSWORD`]; cleaning disabled: it has no deploy
//! ramdisk), every emulated system synced and `available`, a server of the images claims boot
//! from, and the tenants granted it.

use std::time::Duration;

use podium_server::server::ServeConfig;
use podium_types::views::ClaimView;
use podium_types::{ClaimId, ClaimState, HostId};
use serde_json::{Value, json};

use crate::sushy::{Sushy, SushyConfig};
use crate::{Client, ImageServer, TestServer};

/// The password of a test site's BMC: Podium must never show it, so tests look for it in what
/// it answers and logs.
pub const BMC_PASSWORD: &str = "podium-test-bmc-Passw0rd-7c41";

/// A Podium server with one pod manager in front of an emulator, its systems available.
#[derive(Debug)]
pub struct Site {
    pub server: TestServer,
    pub bmc: Sushy,
    /// The pod manager's uuid.
    pub pm: String,
    pub admin: Client,
    /// Serves the claims' images: a claim that binds online is provisioned with one.
    pub images: ImageServer,
}

/// A tenant granted a site, and its token.
#[derive(Debug)]
pub struct Tenant {
    pub id: String,
    pub token: String,
    /// A client with the token.
    pub client: Client,
}

/// A server that probes every 300 ms and syncs only when asked (or when a pod manager is
/// registered): what a site's tests expect of it.
pub fn quick(config: &mut ServeConfig) {
    config.probe_interval = Duration::from_millis(300);
    config.sync_interval = Duration::from_secs(3600);
}

impl Site {
    /// A site of `systems` emulated systems.
    pub async fn start(systems: u32) -> Site {
        Site::start_with(SushyConfig::with_systems(systems), |_| {}).await
    }

    /// A site whose emulator `bmc` describes (its systems, its features), on a server `adjust`
    /// configures further.
    pub async fn start_with(bmc: SushyConfig, adjust: impl FnOnce(&mut ServeConfig)) -> Site {
        let server = TestServer::start_with(|c| {
            quick(c);
            adjust(c);
        })
        .await;
        Site::on(server, bmc).await
    }

    /// A site on `server` (one serving TLS, say).
    pub async fn on(server: TestServer, mut bmc: SushyConfig) -> Site {
        bmc.basic_auth
            .get_or_insert_with(|| ("admin".into(), BMC_PASSWORD.into()));
        // The emulator's own systems, or the libvirt domains it serves.
        let systems = bmc
            .libvirt
            .as_ref()
            .map_or(bmc.systems.len(), |l| l.domains.len());
        let (user, password) = bmc.basic_auth.clone().expect("just set");
        let bmc = Sushy::start(bmc).await.expect("sushy-tools starts");
        let admin = server.admin();
        // An emulated site has no deploy ramdisk to clean disks with: its admin turned
        // cleaning off, as one must where a release may not clean (`docs/deploy.md`). The
        // tests of cleaning turn it on.
        let pm = admin
            .created(
                "/v1/pod_managers",
                json!({"name": "site", "url": bmc.url(),
                       "auth": {"username": user, "password": password},
                       "deploy": {"cleaning": "disabled"}}),
            )
            .await
            .body["uuid"]
            .as_str()
            .expect("a pod manager's uuid")
            .to_owned();
        admin.systems_in_state(&pm, systems, "available").await;
        let images = ImageServer::start(vec![0x42; 4096]).await;
        Site {
            server,
            bmc,
            pm,
            admin,
            images,
        }
    }

    /// A new tenant with a token and no grant.
    pub async fn tenant_without_grant(&self, name: &str) -> Tenant {
        let id = self
            .admin
            .created("/v1/tenants", json!({ "name": name }))
            .await
            .body["id"]
            .as_str()
            .expect("a tenant's id")
            .to_owned();
        let token = self
            .admin
            .created(&format!("/v1/tenants/{id}/tokens"), json!({}))
            .await
            .body["token"]
            .as_str()
            .expect("a token")
            .to_owned();
        Tenant {
            client: self.server.client(Some(&token)),
            id,
            token,
        }
    }

    /// A new tenant granted the site, with a token.
    pub async fn tenant(&self, name: &str) -> Tenant {
        let (id, token) = self.admin.granted_tenant(name, &self.pm).await;
        Tenant {
            client: self.server.client(Some(&token)),
            id,
            token,
        }
    }

    /// A claim by `tenant` (its token) of a host of the site, not to be provisioned
    /// (`online: false`): bound as it is created, or the test fails.
    pub async fn claimed(&self, token: &str) -> Claimed {
        let reply = self
            .server
            .client(Some(token))
            .created("/v1/claims", self.claim(json!({"online": false})))
            .await;
        let claim: ClaimView = reply.view();
        assert_eq!(claim.state, ClaimState::Bound, "{}", reply.text);
        Claimed {
            id: claim.id,
            host: claim.host.expect("a bound claim's host").id,
        }
    }

    /// A claim of a host of the site, for the image `/os.iso`, with `extra`'s fields too.
    pub fn claim(&self, extra: Value) -> Value {
        let mut body =
            json!({"pod_manager": self.pm, "image": {"url": self.images.url("/os.iso")}});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        body
    }
}

/// A claim bound as it was created, and the host it holds.
#[derive(Clone, Debug)]
pub struct Claimed {
    pub id: ClaimId,
    pub host: HostId,
}

/// A tenant is used as its client.
impl std::ops::Deref for Tenant {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}
