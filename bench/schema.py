#!/usr/bin/env python3
"""Schema changes (issue 30): adding a column with a default to a 1,000,000-row table, on SQLite
and on PostgreSQL (a throwaway local server this script starts and stops). Each figure is what
the schema change adds to a run: `batchrun run` of a job file that declares the new column
(the change is made, printed and recorded) against the same run once the column is there
(nothing to change), alternating, the column dropped again between rounds; medians of RUNS
(default 5). Targets: SQLite at most 50 ms, PostgreSQL at most 100 ms.
Writes .build-bench/schema.json.
    bench/schema.py [ROWS]        (a release build; BATCHRUN=path/to/batchrun for another)
"""
import json, os, sqlite3, statistics, subprocess, sys, time

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
RUNS = int(os.environ.get("RUNS", "5"))
ROOT = os.path.abspath(".")
BIN = os.environ.get("BATCHRUN", f"{ROOT}/.build/release/batchrun")
OUT = f"{ROOT}/.build-bench/schema"
SERVER = f"{ROOT}/Tests/TestSupport/pg-throwaway.sh"
PSQL = sorted(os.listdir("/usr/lib/postgresql"), key=int)[-1]
PSQL = f"/usr/lib/postgresql/{PSQL}/bin/psql"


def psql(url, sql):
    return subprocess.run([PSQL, url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
                          check=True, capture_output=True, text=True).stdout.strip()


def job_file(store, with_score):
    score = "\n      score: real default 1.5" if with_score else ""
    return f"""version: 1
store: {store}
entities:
  Reading:
    columns:
      id: integer primary key
      sensor: text not null
      value: real{score}
jobs:
  one:
    steps:
      - fetch: {{ entity: Reading, where: "id = 1" }}
"""


def timed_run(path):
    started = time.perf_counter()
    result = subprocess.run([BIN, "run", path, "--quiet", "--jobs", "1"], check=True, capture_output=True, text=True)
    return time.perf_counter() - started, result.stdout


def measure(store, drop):
    """Median seconds of a run that adds the column, of a run that finds it, and their difference."""
    os.makedirs(OUT, exist_ok=True)
    with open(f"{OUT}/new.yaml", "w") as f:
        f.write(job_file(store, True))
    changing, unchanged = [], []
    for round in range(RUNS + 1):
        drop()
        first, _ = timed_run(f"{OUT}/new.yaml")
        again, _ = timed_run(f"{OUT}/new.yaml")
        if round > 0:   # the first round warms up
            changing.append(first)
            unchanged.append(again)
    a, b = statistics.median(changing), statistics.median(unchanged)
    return a, b, statistics.median([x - y for x, y in zip(changing, unchanged)])


def sqlite_figures():
    path = f"{OUT}/readings.sqlite"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    os.makedirs(OUT, exist_ok=True)
    with open(f"{OUT}/old.yaml", "w") as f:
        f.write(job_file(f'"{path}"', False))
    subprocess.run([BIN, "run", f"{OUT}/old.yaml", "--quiet"], check=True, capture_output=True)
    db = sqlite3.connect(path)
    db.executemany('INSERT INTO "Reading" (id, sensor, value) VALUES (?, ?, ?)',
                   ((i, f"s{i % 97}", i / 7) for i in range(1, ROWS + 1)))
    db.commit()
    db.close()

    def drop():
        db = sqlite3.connect(path)
        columns = [row[1] for row in db.execute('PRAGMA table_info("Reading")')]
        if "score" in columns:
            db.execute('ALTER TABLE "Reading" DROP COLUMN score')
        db.execute("DELETE FROM _batchrun_schema") if "_batchrun_schema" in [r[0] for r in db.execute("SELECT name FROM sqlite_master")] else None
        db.commit()
        db.close()
    return measure(f'"{path}"', drop)


def postgres_figures():
    server = subprocess.run(["bash", SERVER, "start", "--owner", str(os.getpid())], check=True, capture_output=True,
                            text=True).stdout.strip().splitlines()[-1]
    try:
        psql(server, "DROP DATABASE IF EXISTS schema_bench")
        psql(server, "CREATE DATABASE schema_bench")
        url = server.rsplit("/", 1)[0] + "/schema_bench"
        with open(f"{OUT}/old.yaml", "w") as f:
            f.write(job_file(f'{{ postgres: "{url}" }}', False))
        subprocess.run([BIN, "run", f"{OUT}/old.yaml", "--quiet"], check=True, capture_output=True)
        psql(url, f"INSERT INTO reading (id, sensor, value) SELECT i, 's' || (i % 97), i / 7.0 FROM generate_series(1, {ROWS}) i")
        psql(url, "VACUUM ANALYZE reading")

        def drop():
            psql(url, "ALTER TABLE reading DROP COLUMN IF EXISTS score")
            psql(url, "DELETE FROM _batchrun_schema WHERE true" if psql(url, "SELECT to_regclass('_batchrun_schema') IS NOT NULL") == "t" else "SELECT 1")
        return measure(f'{{ postgres: "{url}" }}', drop)
    finally:
        subprocess.run(["bash", SERVER, "stop", server], check=False, capture_output=True)


def main():
    sqlite = sqlite_figures()
    postgres = postgres_figures()
    summary = {"benchmark": "schema", "rows": ROWS, "runs": RUNS}
    for name, (changing, unchanged, added), target in (("sqlite", sqlite, 0.050), ("postgres", postgres, 0.100)):
        summary[name] = {"run_adding_column_s": round(changing, 4), "run_column_there_s": round(unchanged, 4),
                         "schema_change_s": round(added, 4), "target_s": target}
    os.makedirs(".build-bench", exist_ok=True)
    json.dump(summary, open(".build-bench/schema.json", "w"), indent=2)
    print(f"schema change: a column with a default added to a {ROWS:,}-row table, medians of {RUNS}")
    for name, label, target in (("sqlite", "SQLite    ", 50), ("postgres", "PostgreSQL", 100)):
        r = summary[name]
        print(f"  {label} run {r['run_adding_column_s'] * 1000:7.1f} ms, without the change {r['run_column_there_s'] * 1000:7.1f} ms: "
              f"the change adds {r['schema_change_s'] * 1000:6.1f} ms (target at most {target} ms)")


if __name__ == "__main__":
    main()
