"""Changes a claimed host's BIOS attributes and secure boot through Podium's Redfish service
with OpenStack's `sushy` (the library Ironic drives a BMC with), as a tenant.

    redfish_bios_change.py BASE_URL TOKEN SYSTEM_ID

Reads which attributes the registry says are read-only, changes `ProcTurboMode` to `Disabled`,
tries `QuietBoot` (the site does not let tenants change it), turns secure boot on, and looks for
the `Bios.ResetBios` action. Prints one JSON object of what sushy saw; an error other than the
refusal it expects is raised, so the process exits non-zero with sushy's own message.
"""

import json
import sys

import sushy
from sushy import auth as sushy_auth
from sushy import exceptions


def main(base, token, system_id):
    root = sushy.Sushy(f"{base}/redfish/v1", auth=sushy_auth.BasicAuth("tenant", token),
                       verify=False)
    system = root.get_system(f"/redfish/v1/Systems/{system_id}")
    bios = system.bios
    registry = bios.get_attribute_registry()
    read_only = {e.name: e.read_only for e in registry.registry_entries.attributes}
    bios.set_attributes({"ProcTurboMode": "Disabled"})
    try:
        bios.set_attributes({"QuietBoot": False})
        refused = None
    except exceptions.BadRequestError as e:
        refused = str(e)
    system.secure_boot.set_enabled(True)
    try:
        bios.reset_bios()
        reset_offered = True
    except (exceptions.MissingActionError, exceptions.MissingAttributeError):
        reset_offered = False
    print(json.dumps({"read_only": read_only, "refused": refused,
                      "reset_offered": reset_offered}))


if __name__ == "__main__":
    main(*sys.argv[1:])
