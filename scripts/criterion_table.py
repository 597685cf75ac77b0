#!/usr/bin/env python3
"""Prints the plugin-call benchmark's medians (criterion's estimates under target/criterion) as
a markdown table: each call through the component beside the same logic called natively, and the
ratio. Used by scripts/bench.sh."""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1])
medians = {}
for bench in root.glob("*/*/new/benchmark.json"):
    meta = json.loads(bench.read_text())
    estimates = json.loads((bench.parent / "estimates.json").read_text())
    medians[(meta["group_id"], meta["function_id"])] = estimates["median"]["point_estimate"]

# (group, the call through the component, the same logic native, what it is)
PAIRS = [
    ("driver_call", "minimal guest validate-config (instance + call, no import)",
     "minimal native validate-config (same logic, no component)",
     "a fresh instance and one export call alone (minimal guest, `validate-config` of `{}`, "
     "no import): the runtime's floor"),
    ("driver_call", "minimal guest get-power (instance + call + http import)",
     "minimal native get-power (same logic, no component)",
     "driver call, minimal guest (`tests/guests/faulty`): one GET, a substring check"),
    ("driver_call", "redfish get-power (instance + call + http import)",
     "redfish native get-power (SDK test harness, no component)",
     "driver call, bundled Redfish driver: config parsed, one GET, the ComputerSystem parsed "
     "(native: run by the SDK's test harness, an in-process endpoint)"),
    ("render", "render-network-data (instance + call)",
     "render_network_data native (same logic, no component)",
     "render-network-data of the example template, bundled render-openstack"),
]


def fmt(ns):
    return f"{ns / 1000:.1f} µs" if ns >= 1000 else f"{ns:.0f} ns"


print("Medians of criterion's samples.")
print()
print("| call | through the component | native (baseline) | ratio |")
print("|---|---|---|---|")
for group, component, native, what in PAIRS:
    c, n = medians.get((group, component)), medians.get((group, native))
    if c is None or n is None:
        sys.exit(f"criterion has no figures for {group}: {component} / {native}")
    print(f"| {what} | {fmt(c)} | {fmt(n)} | {c / n:.0f}x |")
