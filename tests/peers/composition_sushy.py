"""Reads a Redfish composition service's resource blocks and zones with OpenStack's `sushy`,
a client nobody here wrote, and prints one JSON object of what it saw.

    composition_sushy.py BASE_URL

sushy 5.14's `CompositionService.resource_blocks` and `.resource_zones` pass a method where the
collection's path belongs (an upstream bug), so the collections are opened by their path, as
the service root's composition service names them. Any error is raised: the process exits
non-zero with sushy's own message.
"""

import json
import sys

import sushy
from sushy import auth as sushy_auth
from sushy.resources.compositionservice import resourceblock, resourcezone


def main(base):
    root = sushy.Sushy(base + "/redfish/v1", auth=sushy_auth.BasicAuth("reader", "unused"))
    service = root.get_composition_service()
    seen = {"service": {"identity": service.identity, "enabled": service.service_enabled}}
    args = dict(redfish_version=root.redfish_version, registries=root.lazy_registries, root=root)
    blocks = resourceblock.ResourceBlockCollection(
        root._conn, service._get_resource_blocks_collection_path(), **args)
    seen["blocks"] = {}
    for block in blocks.get_members():
        status = block.composition_status
        seen["blocks"][block.identity] = {
            "name": block.name,
            "state": status.composition_state.value if status.composition_state else None,
            "compositions": status.number_of_compositions,
            "max_compositions": status.max_compositions,
            "reserved": status.reserved_state,
            "health": block.status.health.value if block.status.health else None,
        }
    zones = resourcezone.ResourceZoneCollection(
        root._conn, service._get_resource_zones_collection_path(), **args)
    seen["zones"] = {
        zone.identity: sorted(link["@odata.id"] for link in zone.links.resource_blocks or [])
        for zone in zones.get_members()
    }
    print(json.dumps(seen, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
