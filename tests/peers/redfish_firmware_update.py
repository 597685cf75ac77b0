"""Updates a claimed host's BIOS from an image through Podium's Redfish service with OpenStack's
`sushy` (the library Ironic's redfish firmware interface drives a BMC with), as a tenant.

    redfish_firmware_update.py BASE_URL TOKEN SYSTEM_ID IMAGE_URL

Reads the `UpdateService` and POSTs its `SimpleUpdate` with the image and the system as the
target, as Ironic does; prints one JSON object: the task monitor sushy was answered, or the
refusal (an HTTP error) in sushy's words.
"""

import json
import sys

import sushy
from sushy import auth as sushy_auth
from sushy import exceptions


def main(base, token, system_id, image):
    root = sushy.Sushy(f"{base}/redfish/v1", auth=sushy_auth.BasicAuth("tenant", token),
                       verify=False)
    service = root.get_update_service()
    try:
        monitor = service.simple_update(image, targets=[f"/redfish/v1/Systems/{system_id}"],
                                        transfer_protocol="HTTP")
    except exceptions.HTTPError as e:
        print(json.dumps({"error": str(e), "status": e.status_code}))
        return
    print(json.dumps({"task_monitor": monitor.task_monitor_uri}))


if __name__ == "__main__":
    main(*sys.argv[1:])
