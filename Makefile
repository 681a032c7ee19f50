# What CI runs, a person can run.
.PHONY: build-dev format lint test-rs test-py test bench all

build-dev:
	maturin develop --profile fastbuild

format:
	cargo fmt --all
	python3 scripts/gen_stubs.py
	ruff format python tests benches examples scripts
	ruff check --fix python tests benches examples

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	ruff check python tests benches examples scripts
	ruff format --check python tests benches examples scripts
	python3 -m mypy.stubtest ferrograd._C --allowlist scripts/stubtest_allowlist.txt

test-rs:
	cargo test --workspace --profile fastbuild

test-py:
	python3 -m pytest tests

test:
	bash scripts/test.sh

bench:
	cargo bench -p ferrograd-core
	python3 benches/side_by_side.py

all: lint test
