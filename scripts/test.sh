#!/usr/bin/env bash
# Builds ferrograd and runs the whole test suite: Rust tests, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q ".[test]"
cargo test --workspace --profile fastbuild
python3 -m pytest tests
