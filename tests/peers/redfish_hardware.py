"""Reads a claimed host's BIOS, its attribute registry, secure boot, processors and storage
through Podium's Redfish service with OpenStack's `sushy` (the library Ironic reads a BMC with).

    redfish_hardware.py BASE_URL TOKEN SYSTEM_ID

Prints one JSON object of what sushy saw. Any error is raised, so the process exits non-zero
with sushy's own message.
"""

import json
import sys

import sushy
from sushy import auth as sushy_auth


def plain(value):
    """An enum of sushy's as the string the service sent."""
    return getattr(value, "value", value)


def main(base, token, system_id):
    root = sushy.Sushy(f"{base}/redfish/v1", auth=sushy_auth.BasicAuth("tenant", token),
                       verify=False)
    system = root.get_system(f"/redfish/v1/Systems/{system_id}")
    bios = system.bios
    registry = bios.get_attribute_registry()
    entries = {e.name: {"type": plain(e.attribute_type), "read_only": e.read_only,
                        "values": [v["ValueName"] for v in (e.allowable_values or [])]}
               for e in registry.registry_entries.attributes}
    summary = system.processors.summary
    seen = {
        "attributes": bios.attributes,
        "pending": bios.pending_attributes,
        "registry_id": registry.identity,
        "registry": entries,
        "processors": {"count": summary.count, "architecture": plain(summary.architecture)},
        "processor_models": sorted(p.model or "" for p in system.processors.get_members()),
        "secure_boot": system.secure_boot.enabled,
        "simple_storage": [s.identity for s in system.simple_storage.get_members()],
        "storage": [s.identity for s in system.storage.get_members()],
    }
    print(json.dumps(seen))


if __name__ == "__main__":
    main(*sys.argv[1:])
