#!/usr/bin/env python3
"""Feeds in parts (issue 47, section 17): one import of 24 gzipped parts of 100,000 rows
(integer key, integer, real, text, datetime, boolean) on each backend, with the same job file:
  - `parallel: 2` against `parallel: 1` (target: at least 1.3x the rows per second);
  - the parts (`parallel: 1`) against the same rows as one gzipped file: what reading in parts
    costs (target: at most 10% more time).
SQLite (a new store file each run) and PostgreSQL (a throwaway local server this script starts
and stops, the table dropped before each run); medians of RUNS (default 3), alternating.
Writes .build-bench/parts.json.
    bench/parts.py [PARTS] [ROWS_PER_PART]      (a release build)
"""
import gzip, json, os, random, shutil, statistics, subprocess, sys, time

PARTS = int(sys.argv[1]) if len(sys.argv) > 1 else 24
ROWS = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
RUNS = int(os.environ.get("RUNS", "3"))
ROOT = os.path.abspath(".")
BIN = f"{ROOT}/.build/release/batchrun"
WORK = f"{ROOT}/.build-bench/parts"
SERVER = f"{ROOT}/Tests/TestSupport/pg-throwaway.sh"
PSQL = f"/usr/lib/postgresql/{sorted(os.listdir('/usr/lib/postgresql'), key=int)[-1]}/bin/psql"

JOB = """version: 1
store: {store}
entities:
  Reading:
    columns: {{ id: integer primary key, sensor: integer not null, value: real, label: text, taken_at: datetime, ok: boolean }}
jobs:
  load:
    batch_size: 10000
    steps:
      - insert: {{ entity: Reading, from: "{source}"{parallel} }}
"""


def make_feeds():
    """PARTS gzipped parts and one gzipped file of the same rows, made once."""
    marker = f"{WORK}/data-{PARTS}x{ROWS}"
    if os.path.exists(marker):
        return
    shutil.rmtree(f"{WORK}/data", ignore_errors=True)
    os.makedirs(f"{WORK}/data/parts")
    generator = random.Random(47)
    header = "id,sensor,value,label,taken_at,ok\n"
    with gzip.open(f"{WORK}/data/all.csv.gz", "wt", compresslevel=6) as whole:
        whole.write(header)
        for part in range(PARTS):
            lines = []
            for row in range(part * ROWS + 1, (part + 1) * ROWS + 1):
                lines.append(f"{row},{generator.randrange(5000)},{generator.random() * 100:.4f},label {generator.randrange(900)},"
                             f"2026-11-{1 + row % 28:02d}T{row % 24:02d}:{row % 60:02d}:00Z,{'true' if row % 3 else 'false'}\n")
            text = "".join(lines)
            whole.write(text)
            with gzip.open(f"{WORK}/data/parts/part-{part:03d}.csv.gz", "wt", compresslevel=6) as out:
                out.write(header + text)
    open(marker, "w").close()


def psql(url, sql):
    return subprocess.run([PSQL, url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
                          check=True, capture_output=True, text=True).stdout.strip()


def timed_run(name, store, source, parallel, reset):
    job = f"{WORK}/{name}.yaml"
    with open(job, "w") as out:
        out.write(JOB.format(store=store, source=source, parallel="" if parallel is None else f", parallel: {parallel}"))
    reset()
    started = time.perf_counter()
    subprocess.run([BIN, job, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def measure(backend, store, reset, count):
    shapes = {"parallel 1": ("data/parts/part-*.csv.gz", 1), "parallel 2": ("data/parts/part-*.csv.gz", 2),
              "one file": ("data/all.csv.gz", 1)}   # one session as parts' parallel 1 (on PostgreSQL the default is 3)
    times = {shape: [] for shape in shapes}
    for _ in range(RUNS):
        for shape, (source, parallel) in shapes.items():
            times[shape].append(timed_run(f"{backend}-{shape.replace(' ', '-')}", store, source, parallel, reset))
            assert count() == PARTS * ROWS, f"{backend} {shape}: {count()} rows"
    return {shape: statistics.median(values) for shape, values in times.items()}


def main():
    make_feeds()
    total = PARTS * ROWS
    results = {}
    sqlite = f"{WORK}/store.sqlite"

    def reset_sqlite():
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(sqlite + suffix):
                os.remove(sqlite + suffix)

    def count_sqlite():
        return int(subprocess.run(["sqlite3", sqlite, "SELECT count(*) FROM Reading"], check=True, capture_output=True,
                                  text=True).stdout.strip())

    results["sqlite"] = measure("sqlite", "store.sqlite", reset_sqlite, count_sqlite)
    server = subprocess.run(["bash", SERVER, "start", "--owner", str(os.getpid())], check=True, capture_output=True,
                            text=True).stdout.strip().splitlines()
    try:
        url = server[-1]
        psql(url, "DROP DATABASE IF EXISTS parts_bench")
        psql(url, "CREATE DATABASE parts_bench")
        url = url.rsplit("/", 1)[0] + "/parts_bench"

        def reset_postgres():
            psql(url, "DROP TABLE IF EXISTS reading, _batchrun_runs, _batchrun_jobs, _batchrun_progress, _batchrun_parts")

        results["postgres"] = measure("postgres", url, reset_postgres, lambda: int(psql(url, "SELECT count(*) FROM reading")))
    finally:
        subprocess.run(["bash", SERVER, "stop", server[0]], check=False)
    summary = {"benchmark": "parts", "parts": PARTS, "rows_per_part": ROWS, "runs": RUNS, "backends": {}}
    print(f"Feeds in parts: {PARTS} gzipped parts of {ROWS:,} rows ({total:,} rows), medians of {RUNS}")
    for backend, figures in results.items():
        speedup = figures["parallel 1"] / figures["parallel 2"]
        cost = figures["parallel 1"] / figures["one file"] - 1
        summary["backends"][backend] = {
            "seconds": {shape: round(value, 3) for shape, value in figures.items()},
            "rows_per_s": {shape: round(total / value) for shape, value in figures.items()},
            "parallel_2_speedup": round(speedup, 2), "speedup_target": 1.3,
            "parts_cost": round(cost, 3), "parts_cost_target": 0.10,
        }
        print(f"  {backend:8}  one file {figures['one file']:6.2f} s   parts, parallel 1 {figures['parallel 1']:6.2f} s "
              f"({cost * 100:+.1f}%, target at most +10%)   parallel 2 {figures['parallel 2']:6.2f} s "
              f"({speedup:.2f}x the rows per second, target at least 1.3x)")
    os.makedirs(f"{ROOT}/.build-bench", exist_ok=True)
    json.dump(summary, open(f"{ROOT}/.build-bench/parts.json", "w"), indent=2)


if __name__ == "__main__":
    main()
