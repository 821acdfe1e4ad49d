# batchrun — build, run, test.  `make run` and `make test` are all a new machine needs.
SWIFT   ?= swift
PREFIX  ?= /usr/local
JOB     ?= jobs/nightly.yaml
RELEASE := .build/release/batchrun
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# System packages the build and tests need (the tests drive the sqlite3 program as an outside
# writer), installed with apt-get when missing.
SYSTEM_PACKAGES := libsqlite3-dev sqlite3

.PHONY: all deps bench-deps build debug run test bench check plan install uninstall clean data help

all: build

help:
	@echo "make run      build (release) and run $(JOB) on its embedded SQLite store"
	@echo "make test     build and run every test"
	@echo "make check    validate $(JOB) without touching the store"
	@echo "make plan     show $(JOB)'s jobs in waves"
	@echo "make bench    build (release) and run the benchmarks (docs/benchmarks.md); figures in .build-bench/*.json"
	@echo "make install  install batchrun into $(PREFIX)/bin (PREFIX=... to change)"
	@echo "make data     regenerate the example feeds in examples/data"
	@echo "make clean    remove build products, the example store and reports"

deps:
	@missing=""; for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing with apt-get"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build -c release --product batchrun

debug: deps
	$(SWIFT) build

run: build
	$(RELEASE) $(JOB)

check: build
	$(RELEASE) check $(JOB)

plan: build
	$(RELEASE) plan $(JOB)

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test

bench-deps: deps
	@missing=""; command -v hyperfine >/dev/null 2>&1 || missing="$$missing hyperfine"; \
	command -v cc >/dev/null 2>&1 || missing="$$missing gcc"; [ -x /usr/bin/time ] || missing="$$missing time"; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing with apt-get"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

bench: build bench-deps
	$(SWIFT) build -c release --product batchrun-bench-scheduler
	bench/import.sh 336776
	bench/import.sh 1000000
	bench/conflicts.sh
	bench/memory.sh
	bench/update.sh
	python3 bench/cancel.py
	bench/scheduler.sh

install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(RELEASE) $(DESTDIR)$(PREFIX)/bin/batchrun

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/batchrun

data:
	python3 examples/generate_data.py

clean:
	rm -rf .build .build-bench var reports
