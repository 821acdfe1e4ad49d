#!/usr/bin/env python3
"""Cancellation latency: SIGINT to process exit, during a 1,000,000-row import, a context-mode
batch-update of 1,000,000 rows, and a long aggregate fetch. Prints p50/p95 per scenario and
writes .build-bench/cancel.json.
    python3 bench/cancel.py [TRIALS]      (needs a release build: make build)
"""
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, ".build-bench", "cancel")
BIN = os.path.join(ROOT, ".build", "release", "batchrun")
TRIALS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
ROWS = 1_000_000

MODEL = """version: 1
store: work.sqlite
entities:
  Account:
    columns: { id: integer primary key, owner: text not null, balance: integer not null, status: text not null default 'open' }
"""
JOBS = {
    "import": MODEL + "jobs:\n  load:\n    steps:\n      - insert: { entity: Account, from: accounts.csv }\n",
    "batch-update": MODEL + "jobs:\n  bump:\n    steps:\n      - batch-update: { entity: Account, set: { balance: \"balance + 1\" } }\n",
    "aggregate-fetch": MODEL + "jobs:\n  heavy:\n    steps:\n      - fetch:\n          entity: Account\n"
        "          select: { pairs: \"(SELECT count(*) FROM Account a JOIN Account b ON b.id % 1000 = a.id % 1000 WHERE a.id <= 200000)\" }\n"
        "          where: \"id = 1\"\n          output: \"-\"\n",
}


def prepare():
    os.makedirs(OUT, exist_ok=True)
    csv = os.path.join(OUT, "accounts.csv")
    if not os.path.exists(csv):
        rng = random.Random(7)
        with open(csv, "w") as out:
            out.write("id,owner,balance\n")
            for i in range(1, ROWS + 1):
                out.write(f"{i},owner{i % 5000},{rng.randint(0, 999)}\n")
    base = os.path.join(OUT, "base.sqlite")
    if not os.path.exists(base):
        db = sqlite3.connect(base)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE Account (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, balance INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'open')")
        db.executemany("INSERT INTO Account VALUES (?, ?, ?, 'open')", ((i, f"owner{i % 5000}", i % 1000) for i in range(1, ROWS + 1)))
        db.commit()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
    for name, text in JOBS.items():
        with open(os.path.join(OUT, name + ".yaml"), "w") as out:
            out.write(text)


def trial(name):
    work = os.path.join(OUT, "work.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(work + suffix):
            os.remove(work + suffix)
    if name != "import":
        shutil.copy(os.path.join(OUT, "base.sqlite"), work)
    process = subprocess.Popen([BIN, name + ".yaml", "--quiet"], cwd=OUT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.7)                      # well into the work: the import, update or query is running
    if process.poll() is not None:
        raise SystemExit(f"{name}: finished before the signal; make the work longer")
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    process.wait()
    latency = time.monotonic() - sent
    if process.returncode != -signal.SIGINT:
        raise SystemExit(f"{name}: ended with {process.returncode}, not by SIGINT")
    return latency


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


prepare()
results = {}
for name in JOBS:
    times = [trial(name) for _ in range(TRIALS)]
    results[name] = {"p50_ms": round(percentile(times, 0.5) * 1000, 1), "p95_ms": round(percentile(times, 0.95) * 1000, 1),
                     "max_ms": round(max(times) * 1000, 1), "trials": TRIALS}
summary = {"benchmark": "cancellation-latency", "target_p95_ms": 250, "scenarios": results}
with open(os.path.join(ROOT, ".build-bench", "cancel.json"), "w") as out:
    json.dump(summary, out, indent=2)
print(f"cancellation latency, SIGINT to exit ({TRIALS} trials each; target p95 at most 250 ms)")
for name, figures in results.items():
    print(f"  {name:16} p50 {figures['p50_ms']:7.1f} ms   p95 {figures['p95_ms']:7.1f} ms   max {figures['max_ms']:7.1f} ms")
