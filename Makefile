# batchrun — build, run, test.  `make run` and `make test` are all a new machine needs.
SWIFT   ?= swift
PREFIX  ?= /usr/local
JOB     ?= jobs/nightly.yaml
RELEASE := .build/release/batchrun
DEBUG   := .build/debug/batchrun
# Release builds link the Swift runtime into the binary (it runs where Swift is not installed) and
# pack its relative relocations (DT_RELR, glibc 2.36 or later): 6 MB less resident memory for
# serve (docs/benchmarks.md). Symbols are bound at load (-z now: the whole GOT read-only, full
# RELRO), as Debian's hardening asks of a service.
RELEASE_FLAGS := -c release --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
	-Xlinker -z -Xlinker now
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# $(call apt_install,PACKAGES): installs those of PACKAGES that are missing, with apt-get.
apt_install = missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing with apt-get"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
# System packages the build and tests need (the tests drive the sqlite3 program as an outside
# writer), installed with apt-get when missing.
SYSTEM_PACKAGES := libsqlite3-dev sqlite3
# Compressed feeds and outputs: zlib and libzstd (the tests make .zst files with the zstd program).
SYSTEM_PACKAGES += zlib1g-dev libzstd-dev zstd
# The tests also start throwaway PostgreSQL servers (initdb and pg_ctl as the postgres user).
TEST_PACKAGES := postgresql
# The live page's test (batchrun serve) loads it in headless Chromium.
TEST_PACKAGES += chromium
# The HTTPS feed tests make a self-signed certificate with the openssl program.
TEST_PACKAGES += openssl
# The S3 tests make a virtual environment with moto's server in it (Tests/TestSupport/moto-throwaway.sh).
TEST_PACKAGES += python3-venv

# `make deb` (docs/operations.md): dpkg-shlibdeps (dpkg-dev) computes Depends.
DEB_PACKAGES := dpkg-dev
# `make deb-test` checks the package with lintian, renders its man pages, completes in bash, zsh
# and fish, scores its units with systemd-analyze, and boots a container with systemd as init
# (systemd-container) to install it and run its units for real.
PACKAGING_PACKAGES := lintian systemd systemd-container man-db sqlite3 zsh fish
# swift-argument-parser's generate-manual tool makes the man pages from the commands themselves.
GENERATE_MANUAL := .build/release/generate-manual
DEB_DIR := .build-deb

# Fuzzing (docs/development.md): libFuzzer targets for the job-file loader and each feed reader.
FUZZ_SECONDS ?= 180
FUZZ_TEST_SECONDS ?= 20
FUZZ_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
# Processes the end-to-end tests are split over by make test (Tests/run-tests.sh).
TEST_SHARDS ?= 4
FUZZ_TARGETS := jobfile csv tsv ndjson json
# The decompressors, each under the CSV reader (the input is the compressed file).
FUZZ_TARGETS += gzip zstd
# The fuzz targets need no PostgreSQL: without the trait the fuzz build compiles neither NIO nor BoringSSL.
FUZZ_FLAGS := --product batchrun-fuzz --scratch-path .build-fuzz --disable-default-traits \
	-Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library -Xswiftc -DFUZZING

.PHONY: all deps test-deps bench-deps packaging-deps build debug run test example-models test-busy bench bench-html check plan install uninstall clean data help fuzz fuzz-build fuzz-short queue-demo deb deb-test

all: build

help:
	@echo "make run      build (debug, as make test does) and run $(JOB) on its embedded SQLite store"
	@echo "make test     build and run every test"
	@echo "make example-models  build and run examples/models, a package using BatchRunKit's @Model and #Filter (docs/library.md)"
	@echo "make test-busy  make test 3 times in a row beside 2 CPU-bound processes (RUNS, HOGS)"
	@echo "make check    validate $(JOB) without touching the store (debug build)"
	@echo "make plan     show $(JOB)'s jobs in waves (debug build)"
	@echo "make build    build the release binary $(RELEASE): the one to run on real data, install or copy"
	@echo "make queue-demo  queue examples/queue/*.yaml in var/queue and drain it with a worker (docs/queue.md; debug build)"
	@echo "make fuzz     fuzz the job-file loader and the feed readers, FUZZ_SECONDS (default $(FUZZ_SECONDS)) each; finds kept in fuzz/corpus"
	@echo "make bench    build (release) and run the benchmarks (docs/benchmarks.md); figures in .build-bench/*.json"
	@echo "make bench-html  the HTML report of a 50-job run: size, load time in headless Chromium (installs chromium)"
	@echo "make install  install batchrun (stripped), its man pages and completions into $(PREFIX) (PREFIX=... to change)"
	@echo "make deb      build $(DEB_DIR)/batchrun_VERSION_ARCH.deb: binary, man pages, completions, systemd units (docs/operations.md)"
	@echo "make deb-test build the package and check it: lintian, man pages, completion, units, dpkg -i and --purge, the worker's unit under systemd"
	@echo "make data     regenerate the example feeds in examples/data"
	@echo "make clean    remove build products, the example store and reports"

deps:
	@$(call apt_install,$(SYSTEM_PACKAGES))

test-deps: deps
	@$(call apt_install,$(TEST_PACKAGES))

build: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product batchrun

# The debug build of the command line: what make run, check, plan and queue-demo use. It takes about 4
# minutes from a fresh clone on 2 cores, the release build about 7 (docs/benchmarks.md), and
# make test's build then reuses it.
debug: deps
	$(SWIFT) build --product batchrun

run: debug
	$(DEBUG) $(JOB)

check: debug
	$(DEBUG) check $(JOB)

plan: debug
	$(DEBUG) plan $(JOB)

test: test-deps
	$(SWIFT) build --build-tests
	SWIFT="$(SWIFT)" TEST_SHARDS=$(TEST_SHARDS) Tests/run-tests.sh
	$(MAKE) example-models
	$(MAKE) fuzz-short

# A library user's package (examples/models): BatchRunKit by path with the Macros trait, built
# and run; it checks its five scenarios and exits 1 on the first that fails.
example-models: deps
	$(SWIFT) build --package-path examples/models
	examples/models/.build/debug/airline-models

# make test RUNS times in a row (default 3) beside HOGS CPU-bound processes (default 2).
test-busy: test-deps
	MAKE="$(MAKE)" Tests/busy-machine.sh

fuzz-build: deps
	$(SWIFT) build $(FUZZ_FLAGS)

# A short run of every target for make test, each about FUZZ_TEST_SECONDS of one core; the corpus
# is not changed. Every target at once, for FUZZ_TEST_SECONDS x targets / cores (FUZZ_JOBS, at
# most one per target): the same CPU each as one per core in turn, without a last round of one
# target that leaves a core idle.
FUZZ_SHORT_SECONDS = $(shell t=$(words $(FUZZ_TARGETS)); j=$(FUZZ_JOBS); [ "$$j" -ge 1 ] 2>/dev/null || j=1; \
	[ "$$j" -gt "$$t" ] && j=$$t; echo $$(( ($(FUZZ_TEST_SECONDS) * t + j - 1) / j )))
fuzz-short: fuzz-build
	@printf '%s\n' $(FUZZ_TARGETS) | xargs -P $(words $(FUZZ_TARGETS)) -I{} fuzz/run.sh {} $(FUZZ_SHORT_SECONDS)

fuzz: fuzz-build
	@printf '%s\n' $(FUZZ_TARGETS) | xargs -P $(FUZZ_JOBS) -I{} fuzz/run.sh {} $(FUZZ_SECONDS) --keep

bench-deps: test-deps
	@missing=""; command -v hyperfine >/dev/null 2>&1 || missing="$$missing hyperfine"; \
	command -v cc >/dev/null 2>&1 || missing="$$missing gcc"; [ -x /usr/bin/time ] || missing="$$missing time"; \
	command -v valgrind >/dev/null 2>&1 || missing="$$missing valgrind"; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing with apt-get"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

bench: build bench-deps
	$(SWIFT) build $(RELEASE_FLAGS) --product batchrun-bench-scheduler
	$(SWIFT) build $(RELEASE_FLAGS) --product batchrun-bench-library
	$(SWIFT) build $(RELEASE_FLAGS) --product batchrun-bench-checkpoints
	RELEASE_FLAGS="$(RELEASE_FLAGS)" bench/library.sh
	bench/import.sh 336776
	bench/import.sh 1000000
	bench/conflicts.sh
	bench/memory.sh
	bench/batches.sh
	bench/update.sh
	bench/checkpoints.sh
	bench/relationships.sh .build/release/batchrun
	python3 bench/queue.py
	python3 bench/postgres.py
	python3 bench/reconnect.py
	python3 bench/cancel.py
	python3 bench/schema.py
	python3 bench/queue_features.py
	python3 bench/feeds.py
	python3 bench/parts.py
	python3 bench/fanout.py
	python3 bench/operating.py
	python3 bench/live.py
	bench/scheduler.sh
	bench/split.sh

bench-html: build
	@command -v chromium >/dev/null 2>&1 || { echo "installing chromium with apt-get"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	bench/html_report.sh

# A queue folder in var/queue: three items submitted, drained by one worker, then listed.
queue-demo: debug
	rm -rf var/queue
	$(DEBUG) submit var/queue examples/queue/import_sessions.yaml
	$(DEBUG) submit var/queue examples/queue/close_stale.yaml --param cutoff=2026-01-01
	$(DEBUG) submit var/queue examples/queue/stats.yaml
	$(DEBUG) worker var/queue --once
	$(DEBUG) queue var/queue
	cat var/queue/stats.csv

packaging-deps:
	@$(call apt_install,$(PACKAGING_PACKAGES))

$(GENERATE_MANUAL): build
	$(SWIFT) build $(RELEASE_FLAGS) --product generate-manual

install: build $(GENERATE_MANUAL)
	packaging/stage.sh $(RELEASE) $(GENERATE_MANUAL) "$(DESTDIR)" $(PREFIX)

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/batchrun $(DESTDIR)$(PREFIX)/share/man/man1/batchrun.1.gz \
	  $(DESTDIR)$(PREFIX)/share/man/man1/batchrun-*.1.gz $(DESTDIR)$(PREFIX)/share/bash-completion/completions/batchrun \
	  $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_batchrun $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_batchrun \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/batchrun.fish

deb: build $(GENERATE_MANUAL)
	@$(call apt_install,$(DEB_PACKAGES))
	packaging/build-deb.sh $(RELEASE) $(GENERATE_MANUAL) $(DEB_DIR)

deb-test: deb packaging-deps
	$(SUDO) packaging/test-deb.sh $(DEB_DIR)/batchrun_*.deb
	$(SUDO) packaging/boot-test.sh $(DEB_DIR)/batchrun_*.deb

data:
	python3 examples/generate_data.py

clean:
	rm -rf .build .build-bench .build-fuzz .build-deb .build-macros var reports examples/models/.build
