#!/usr/bin/env python3
"""Queue folders (issue 10): 1,000 items of a trivial job drained by `worker --once --workers 2`
(target: at most 20 s, 20 ms an item), the same drained by a confined worker (`--root`, every
`--max-*` limit, an `--allow-env` and an `--allow-host`; issue 46: at most 2% slower, medians
of 5 drains each, alternating), and the time from a worker's death (SIGKILL, with its item's process) to another,
waiting worker taking its item over (target: at most 1 s).
Writes .build-bench/queue.json.
    bench/queue.py [ITEMS] [TAKEOVERS]      (a release build)
"""
import json, os, shutil, signal, statistics, subprocess, sys, time

ITEMS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
TAKEOVERS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
BIN = os.path.abspath(".build/release/batchrun")
ROOT = os.path.abspath(".build-bench/queue")

TRIVIAL = """version: 1
store: bench.sqlite
entities:
  Tick: { columns: { id: integer primary key, item: text } }
jobs:
  tick:
    steps:
      - insert: { entity: Tick, rows: [{ item: "${param.item}" }] }
"""
SLOW = """version: 1
store: slow.sqlite
entities:
  Tick: { columns: { id: integer primary key, item: text } }
jobs:
  slow:
    steps:
      - insert: { entity: Tick, rows: [{ item: one }] }
    on_complete: "sleep 30"
"""


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)


CONFINED = ["--root", ROOT, "--max-item-time", "1h", "--max-rows", "1000000", "--max-bytes", "1GiB", "--allow-env", "HOME",
            "--allow-host", "127.0.0.1"]
ROUNDS = 5


def drain(options=()):
    queue = f"{ROOT}/drain"
    fresh(queue)
    with open(f"{ROOT}/tick.yaml", "w") as f:
        f.write(TRIVIAL.replace("${param.item}", "x"))
    files = [f"{ROOT}/tick.yaml"] * ITEMS
    subprocess.run([BIN, "submit", queue, *files], check=True, stdout=subprocess.DEVNULL)
    started = time.perf_counter()
    subprocess.run([BIN, "worker", queue, "--once", "--workers", "2", "--quiet", *options], check=True)
    seconds = time.perf_counter() - started
    done = len([n for n in os.listdir(f"{queue}/done") if n.endswith(".yaml")])
    assert done == ITEMS, f"{done} of {ITEMS} items done"
    return seconds


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return []


def takeover():
    """Seconds from killing a worker (and its item's process) to a waiting worker's claim."""
    queue = f"{ROOT}/orphan"
    fresh(queue)
    with open(f"{ROOT}/slow.yaml", "w") as f:
        f.write(SLOW)
    subprocess.run([BIN, "submit", queue, f"{ROOT}/slow.yaml"], check=True, stdout=subprocess.DEVNULL)
    first = subprocess.Popen([BIN, "worker", queue], stdout=subprocess.DEVNULL)
    while not children(first.pid):
        time.sleep(0.01)
    time.sleep(0.3)  # the item's run is under way
    second = subprocess.Popen([BIN, "worker", queue], stdout=subprocess.PIPE, text=True)
    second.stdout.readline()  # "worker on ...": it waits
    orphaned = children(first.pid)
    killed = time.perf_counter()
    first.send_signal(signal.SIGKILL)
    for pid in orphaned:
        os.kill(pid, signal.SIGKILL)
    first.wait()
    while True:
        line = second.stdout.readline()
        if "taking over" in line:
            seconds = time.perf_counter() - killed
            break
        assert line, "the waiting worker ended without taking the orphan over"
    for pid in children(second.pid):
        os.kill(pid, signal.SIGKILL)
    second.send_signal(signal.SIGKILL)
    second.wait()
    return seconds


os.makedirs(ROOT, exist_ok=True)
drain_s = drain()
plain, confined = [], []
for _ in range(ROUNDS):
    plain.append(drain())
    confined.append(drain(CONFINED))
confined_ratio = statistics.median(confined) / statistics.median(plain)
takeovers = [takeover() for _ in range(TAKEOVERS)]
summary = {
    "items": ITEMS, "drain_s": round(drain_s, 2), "per_item_ms": round(1000 * drain_s / ITEMS, 1),
    "takeover_ms_median": round(1000 * statistics.median(takeovers)), "takeover_ms_worst": round(1000 * max(takeovers)),
    "drain_median_s": round(statistics.median(plain), 2), "confined_drain_median_s": round(statistics.median(confined), 2),
    "confined_ratio": round(confined_ratio, 3),
    "drains_s": [round(s, 2) for s in plain], "confined_drains_s": [round(s, 2) for s in confined],
    "targets": {"drain_s": 20, "per_item_ms": 20, "takeover_ms": 1000, "confined_ratio": 1.02},
}
json.dump(summary, open(".build-bench/queue.json", "w"), indent=2)
print(f"queue folder: {ITEMS:,} trivial items through worker --once --workers 2")
print(f"  drained in     {drain_s:7.2f} s   {summary['per_item_ms']:5.1f} ms an item (target at most 20 s, 20 ms)")
print(f"  confined worker {summary['confined_drain_median_s']:6.2f} s against {summary['drain_median_s']:.2f} s unconfined "
      f"(medians of {ROUNDS}): ratio {summary['confined_ratio']:.3f} (target at most 1.02)")
print(f"  orphan taken over {summary['takeover_ms_median']:4} ms after its worker's death (median of {TAKEOVERS}; worst {summary['takeover_ms_worst']} ms; target at most 1,000 ms)")
