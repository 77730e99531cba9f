# Two commands do all set-up on a fresh machine:
#   make run   build sweep and run sweeps/threads_1_512.toml (needs nvcc and a GPU)
#   make test  the whole test suite (needs neither: nvcc comes from PyPI when missing)
SHELL := /bin/bash
SPEC ?= sweeps/threads_1_512.toml
CUDA_BIN := $(firstword $(wildcard /usr/local/cuda/bin))
export PATH := $(if $(CUDA_BIN),$(PATH):$(CUDA_BIN),$(PATH))

.PHONY: run test build release fmt lint clean

release:
	cargo build --release

run: release
	./target/release/sweep run $(SPEC)

build: release
	./target/release/sweep build $(SPEC)

test:
	@nvcc_dir=$$(scripts/ensure-nvcc.sh) && \
	PATH="$$PATH:$$nvcc_dir" SWEEP_REQUIRE_NVCC=1 cargo test --locked -- --test-threads=2

lint:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings

clean:
	cargo clean
	rm -rf output .tools
