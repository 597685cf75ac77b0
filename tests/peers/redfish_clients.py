"""Drives Podium's Redfish service with two clients nobody here wrote: DMTF's `redfish`
library and OpenStack's `sushy` (the library Ironic drives BMCs with).

    redfish_clients.py BASE_URL TOKEN SYSTEM_ID IMAGE_URL

It acts on the one system the token's tenant holds and prints one JSON object of what each
client saw; the calling test checks the real BMC behind Podium. Any error is raised, so the
process exits non-zero with the client's own message.
"""

import json
import sys
import time

import redfish
import sushy
from sushy import auth as sushy_auth


def dmtf(base, token, system_id):
    """DMTF's library: a session login, the systems, a reset followed through its task
    monitor, logout; then HTTP Basic."""
    seen = {}
    client = redfish.redfish_client(base_url=base, username="tenant", password=token,
                                    default_prefix="/redfish/v1", timeout=10, max_retry=1)
    client.login(auth="session")
    systems = client.get("/redfish/v1/Systems")
    assert systems.status == 200, systems.text
    seen["session_members"] = [m["@odata.id"] for m in systems.dict["Members"]]
    path = f"/redfish/v1/Systems/{system_id}"
    reset = client.post(f"{path}/Actions/ComputerSystem.Reset", body={"ResetType": "ForceOn"})
    seen["reset_status"] = reset.status
    assert reset.is_processing, (reset.status, reset.text)
    deadline = time.time() + 30
    while reset.is_processing:
        assert time.time() < deadline, "the task monitor never finished"
        time.sleep(0.2)
        reset = reset.monitor(client)
    seen["reset_final_status"] = reset.status
    seen["power_after_reset"] = client.get(path).dict["PowerState"]
    client.logout()
    basic = redfish.redfish_client(base_url=base, username="tenant", password=token,
                                   default_prefix="/redfish/v1", timeout=10, max_retry=1)
    basic.login(auth="basic")
    system = basic.get(path)
    assert system.status == 200, system.text
    seen["basic_uuid"] = system.dict.get("UUID")
    bad = redfish.redfish_client(base_url=base, username="tenant", password="pdm_not-a-token",
                                 default_prefix="/redfish/v1", timeout=10, max_retry=1)
    try:
        bad.login(auth="session")
        seen["bad_login"] = "accepted"
    except redfish.rest.v1.InvalidCredentialsError:
        seen["bad_login"] = "refused"
    return seen


def wait_power(system, want):
    deadline = time.time() + 30
    while True:
        system.refresh()
        if system.power_state == want:
            return
        assert time.time() < deadline, f"power stayed {system.power_state}, wanted {want}"
        time.sleep(0.2)


def openstack_sushy(base, token, system_id, image_url):
    """sushy, as Ironic uses it: session auth, power off and on, a one-time boot from CD, and
    an image inserted into the manager's virtual media."""
    seen = {}
    root = sushy.Sushy(f"{base}/redfish/v1",
                       auth=sushy_auth.SessionAuth(username="tenant", password=token))
    system = root.get_system(f"/redfish/v1/Systems/{system_id}")
    seen["sushy_uuid"] = system.uuid
    seen["sushy_macs"] = sorted(nic.mac_address for nic in system.ethernet_interfaces.get_members())
    system.reset_system(sushy.RESET_FORCE_OFF)
    wait_power(system, sushy.POWER_STATE_OFF)
    system.reset_system(sushy.RESET_ON)
    wait_power(system, sushy.POWER_STATE_ON)
    seen["sushy_power"] = getattr(system.power_state, "value", system.power_state)
    system.set_system_boot_options(sushy.BOOT_SOURCE_TARGET_CD,
                                   enabled=sushy.BOOT_SOURCE_ENABLED_ONCE)
    manager = system.managers[0]
    media = [m for m in manager.virtual_media.get_members()
             if any(t in (sushy.VIRTUAL_MEDIA_CD, sushy.VIRTUAL_MEDIA_DVD) for t in m.media_types)]
    assert media, "no CD slot in the manager's virtual media"
    media[0].insert_media(image_url, inserted=True, write_protected=True)
    seen["sushy_media_slot"] = media[0].identity
    return seen


def main():
    base, token, system_id, image_url = sys.argv[1:5]
    seen = dmtf(base, token, system_id)
    seen.update(openstack_sushy(base, token, system_id, image_url))
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
