#!/usr/bin/env bash
# Builds ferrograd and runs the whole test suite: Rust tests, then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q ".[test]"
cargo test --workspace --release
python -m pytest tests
