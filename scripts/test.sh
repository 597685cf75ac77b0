#!/usr/bin/env bash
# Runs everything CI runs: formatting, clippy with warnings as errors, and every test on
# SQLite and then on PostgreSQL, against real peers. Installs what is missing first.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

step() { printf '\n=== %s\n' "$*"; }

step "install what is missing"
scripts/install-deps.sh --tests

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --locked --workspace --all-targets -- -D warnings

step "tests on SQLite"
cargo test --locked --workspace

step "integration tests on PostgreSQL"
PODIUM_TEST_DATABASE=postgres cargo test --locked -p podium-tests --test all
