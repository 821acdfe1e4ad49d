#!/usr/bin/env python3
"""PostgreSQL (issue 11), against a throwaway local server this script starts and stops, each
figure beside its reference in the same run (medians of RUNS, default 5, alternating):
  - import of the 1,000,000-row flight feed: batchrun (COPY FROM STDIN over several sessions at once, the
    default; and on one, `parallel: 1`) against `psql -c "\\copy ..."` into
    the same table (target: at most 0.85x, issue 51), and psql's two streams (the file's halves
    by two psql at once), the server's ceiling for an import over two connections; and issue 51's own
    shape, 2,000,000 rows of six columns (keys given), against psql's \\copy;
  - context batch-update over 1,000,000 rows in batches of 5,000 against one set-based UPDATE
    (target: at most 2x);
  - 1,000 trivial queued items through 4 worker processes (target: at least 100 items/s);
  - a lease takeover: a worker and its run killed with SIGKILL, the time until another worker
    runs the item (target: at most the lease plus 2 s).
Writes .build-bench/postgres.json. BEFORE=path/to/batchrun adds an older build to the import,
in the same alternation.
    bench/postgres.py [ROWS] [ITEMS]      (a release build; ONLY=import,update,queue,takeover picks parts)
"""
import json, os, shutil, signal, statistics, subprocess, sys, time

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
ITEMS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
RUNS = int(os.environ.get("RUNS", "5"))
ONLY = set(os.environ.get("ONLY", "import,update,queue,takeover").split(","))
ROOT = os.path.abspath(".")
BIN = f"{ROOT}/.build/release/batchrun"
BEFORE = os.environ.get("BEFORE")
OUT = f"{ROOT}/.build-bench/postgres"
SERVER = f"{ROOT}/Tests/TestSupport/pg-throwaway.sh"
PSQL = sorted(os.listdir("/usr/lib/postgresql"), key=int)[-1]
PSQL = f"/usr/lib/postgresql/{PSQL}/bin/psql"
LEASE = 2.0


def psql(url, sql, *extra):
    return subprocess.run([PSQL, url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", *extra, "-c", sql],
                          check=True, capture_output=True, text=True).stdout.strip()


def timed(command, url=None, **kwargs):
    """Seconds `command` took; with `url`, after a CHECKPOINT on that server, so that no write the
    previous run left (the checkpointer's, the background writer's) falls into this one."""
    if url:
        psql(url, "CHECKPOINT")
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **kwargs)
    return time.perf_counter() - started


def spread(times):
    """Each run's seconds, in the order run: a median's neighbours show whether it is noise."""
    return " ".join(f"{t:.2f}" for t in times)


def database(server, name):
    psql(server, f"DROP DATABASE IF EXISTS {name}")
    psql(server, f"CREATE DATABASE {name}")
    return server.rsplit("/", 1)[0] + "/" + name


FLIGHT_COLUMNS = ("year, month, day, dep_time, sched_dep_time, dep_delay, arr_time, sched_arr_time, arr_delay, carrier, "
                  "flight, tailnum, origin, dest, air_time, distance, hour, minute, time_hour")


def import_figures(server):
    feed = f"{ROOT}/.build-bench/import/flights-{ROWS}.csv"
    if not os.path.exists(feed):
        os.makedirs(os.path.dirname(feed), exist_ok=True)
        subprocess.run(["python3", "bench/import/make_flights.py", str(ROWS), feed], check=True)
    os.makedirs(f"{ROOT}/.build-bench/import", exist_ok=True)
    link = f"{ROOT}/.build-bench/import/flights.csv"
    if os.path.islink(link) or os.path.exists(link):
        os.remove(link)
    os.symlink(os.path.basename(feed), link)
    url = database(server, "flights_bench")
    # The table as batchrun makes it (bigint, double precision, timestamptz, an identity key).
    subprocess.run([BIN, "bench/import/flights.yaml", "--quiet", "--store", url], check=True, stdout=subprocess.DEVNULL)
    # The server's ceiling for two streams: the file's two halves by two psql at once.
    halves = [f"{ROOT}/.build-bench/import/flights-{ROWS}-half{n}.csv" for n in (1, 2)]
    if not all(os.path.exists(half) for half in halves):
        with open(feed) as whole:
            header, lines = whole.readline(), whole.readlines()
        for n, half in enumerate(halves):
            with open(half, "w") as out:
                out.write(header)
                out.writelines(lines[n * len(lines) // 2:(n + 1) * len(lines) // 2])
    # The same job written on one session (`parallel: 1`), beside the default (several sessions).
    one_session = f"{ROOT}/bench/import/flights-one-session.yaml"
    with open(f"{ROOT}/bench/import/flights.yaml") as job, open(one_session, "w") as out:
        out.write(job.read().replace("nulls: [NA] }", "nulls: [NA], parallel: 1 }"))
    ours, theirs, before, two, one = [], [], [], [], []
    try:
        for _ in range(RUNS):
            for binary, job, times in [(BIN, "bench/import/flights.yaml", ours), (BIN, one_session, one)] \
                    + ([(BEFORE, "bench/import/flights.yaml", before)] if BEFORE else []):
                psql(url, "DROP TABLE IF EXISTS flights; DROP TABLE IF EXISTS _batchrun_runs, _batchrun_jobs, _batchrun_progress")
                times.append(timed([binary, job, "--quiet", "--store", url], url))
                count = psql(url, "SELECT count(*) FROM flights")
                assert count == str(ROWS), f"{binary} {job} imported {count} rows"
            psql(url, "TRUNCATE flights")
            psql(url, "VACUUM flights")
            theirs.append(timed([PSQL, url, "-X", "-q", "-c",
                                 f"\\copy flights ({FLIGHT_COLUMNS}) FROM '{feed}' WITH (FORMAT csv, HEADER, NULL 'NA')"], url))
            psql(url, "TRUNCATE flights")
            psql(url, "VACUUM flights")
            psql(url, "CHECKPOINT")
            started = time.perf_counter()
            streams = [subprocess.Popen([PSQL, url, "-X", "-q", "-c",
                                         f"\\copy flights ({FLIGHT_COLUMNS}) FROM '{half}' WITH (FORMAT csv, HEADER, NULL 'NA')"])
                       for half in halves]
            assert [stream.wait() for stream in streams] == [0, 0]
            two.append(time.perf_counter() - started)
            assert psql(url, "SELECT count(*) FROM flights") == str(ROWS)
            psql(url, "VACUUM flights")
    finally:
        os.remove(one_session)
    print(f"  import, flights, each run: batchrun {spread(ours)}; psql {spread(theirs)}")
    print(f"  import, batchrun on one session (parallel: 1): {statistics.median(one):.2f} s, median of {RUNS}")
    print(f"  import, psql \\copy of the file's halves at once (two streams): {statistics.median(two):.2f} s, median of {RUNS}")
    if before:
        print(f"  import, batchrun before ({BEFORE}): {statistics.median(before):.2f} s, median of {RUNS}")
    return statistics.median(ours), statistics.median(theirs), statistics.median(two), statistics.median(one)


SIX_ROWS = 2_000_000
SIX_JOB = """version: 1
store: six.sqlite
entities:
  things:
    columns: { id: integer primary key, n: integer not null, x: real not null, label: text not null, at: datetime not null, flag: boolean not null }
jobs:
  load:
    batch_size: 10000
    steps:
      - insert: { entity: things, from: six.csv }
"""


def six_column_figures(server):
    """Issue 51's shape: 2,000,000 rows of six columns (integer key given, integer, real, text,
    datetime, boolean), batchrun (default sessions) against psql's \\copy, alternating."""
    folder = f"{ROOT}/.build-bench/import"
    feed = f"{folder}/six.csv"
    if not os.path.exists(feed):
        import random
        rng = random.Random(7)
        with open(feed, "w") as out:
            out.write("id,n,x,label,at,flag\n")
            for i in range(1, SIX_ROWS + 1):
                out.write(f"{i},{rng.randint(0, 100000)},{rng.random() * 1000:.4f},label-{rng.randint(0, 9999)},"
                          f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z,"
                          f"{'true' if i % 3 else 'false'}\n")
    job = f"{folder}/six.yaml"
    with open(job, "w") as out:
        out.write(SIX_JOB)
    url = database(server, "six_bench")
    ours, theirs = [], []
    for _ in range(RUNS):
        psql(url, "DROP TABLE IF EXISTS things; DROP TABLE IF EXISTS _batchrun_runs, _batchrun_jobs, _batchrun_progress")
        ours.append(timed([BIN, job, "--quiet", "--store", url], url))
        assert psql(url, "SELECT count(*) FROM things") == str(SIX_ROWS)
        psql(url, "TRUNCATE things")
        theirs.append(timed([PSQL, url, "-X", "-q", "-c", f"\\copy things (id, n, x, label, at, flag) FROM '{feed}' WITH (FORMAT csv, HEADER)"], url))
        assert psql(url, "SELECT count(*) FROM things") == str(SIX_ROWS)
    print(f"  import, six columns, {SIX_ROWS:,} rows: batchrun {statistics.median(ours):.2f} s, psql \\copy {statistics.median(theirs):.2f} s, "
          f"{statistics.median(ours) / statistics.median(theirs):.2f}x, medians of {RUNS}")
    print(f"    each run: batchrun {spread(ours)}; psql {spread(theirs)}")
    return statistics.median(ours), statistics.median(theirs)


def update_figures(server):
    url = database(server, "update_bench")
    ours, theirs = [], []

    def fresh():
        psql(url, f"""DROP TABLE IF EXISTS account; DROP TABLE IF EXISTS _batchrun_runs, _batchrun_jobs, _batchrun_progress;
            CREATE TABLE account (id bigint PRIMARY KEY, owner text NOT NULL, balance bigint NOT NULL, status text NOT NULL DEFAULT 'open');
            INSERT INTO account SELECT i, 'owner' || (i % 5000), i % 1000, 'open' FROM generate_series(1, {ROWS}) AS i;
            CREATE INDEX account_status_idx ON account (status)""")
        psql(url, "VACUUM ANALYZE account")
    for _ in range(RUNS):
        fresh()
        ours.append(timed([BIN, "bench/update_context.yaml", "--quiet", "--store", url]))
        assert psql(url, "SELECT count(*) FROM account WHERE status = 'touched'") == str(ROWS)
        fresh()
        theirs.append(timed([PSQL, url, "-X", "-q", "-c", "UPDATE account SET balance = balance + 1, status = 'touched'"]))
    return statistics.median(ours), statistics.median(theirs)


TRIVIAL = """version: 1
store: {{ postgres: "{url}" }}
entities:
  Tick: {{ columns: {{ id: integer primary key, item: text }} }}
jobs:
  tick:
    steps:
      - insert: {{ entity: Tick, rows: [{{ item: x }}] }}
"""
SLOW = """version: 1
store: {{ postgres: "{url}" }}
entities:
  Slow: {{ columns: {{ id: integer primary key, item: text }} }}
jobs:
  slow:
    steps:
      - insert: {{ entity: Slow, rows: [{{ item: one }}] }}
    on_complete: "sleep 60"
"""


def queue_figures(server):
    url = database(server, "queue_bench")
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    with open(f"{OUT}/tick.yaml", "w") as f:
        f.write(TRIVIAL.format(url=url))
    subprocess.run([BIN, "submit", url] + [f"{OUT}/tick.yaml"] * ITEMS, check=True, stdout=subprocess.DEVNULL)
    started = time.perf_counter()
    workers = [subprocess.Popen([BIN, "worker", url, "--once", "--quiet", "--lease", "30s", "--trust-submitters"]) for _ in range(4)]
    for worker in workers:
        worker.wait()
    seconds = time.perf_counter() - started
    done = psql(url, "SELECT count(*) FROM _batchrun_queue WHERE state = 'done'")
    assert done == str(ITEMS), f"{done} of {ITEMS} items done"
    assert psql(url, "SELECT count(*) FROM tick") == str(ITEMS)
    return seconds


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return []


def takeover_figures(server, rounds=3):
    url = database(server, "takeover_bench")
    with open(f"{OUT}/slow.yaml", "w") as f:
        f.write(SLOW.format(url=url))
    figures = []
    for _ in range(rounds):
        psql(url, "DELETE FROM _batchrun_queue") if psql(url, "SELECT to_regclass('_batchrun_queue') IS NOT NULL") == "t" else None
        subprocess.run([BIN, "submit", url, f"{OUT}/slow.yaml"], check=True, stdout=subprocess.DEVNULL)
        first = subprocess.Popen([BIN, "worker", url, "--quiet", "--lease", f"{LEASE}s", "--trust-submitters"])
        while psql(url, "SELECT count(*) FROM _batchrun_queue WHERE state = 'running'") != "1" or not children(first.pid):
            time.sleep(0.01)
        second = subprocess.Popen([BIN, "worker", url, "--quiet", "--lease", f"{LEASE}s", "--trust-submitters"])
        time.sleep(0.5)   # the second worker is up and idle
        runs = children(first.pid)
        killed = time.perf_counter()
        os.kill(first.pid, signal.SIGKILL)
        for pid in runs:
            os.kill(pid, signal.SIGKILL)
        first.wait()
        while psql(url, f"SELECT count(*) FROM _batchrun_queue WHERE worker LIKE '{second.pid}@%'") != "1":
            time.sleep(0.01)
        figures.append(time.perf_counter() - killed)
        for pid in children(second.pid):
            os.kill(pid, signal.SIGKILL)
        second.kill()
        second.wait()
    return statistics.median(figures), max(figures)


def main():
    server = subprocess.run(["bash", SERVER, "start", "--owner", str(os.getpid())], check=True, capture_output=True,
                            text=True).stdout.strip().splitlines()[-1]
    try:
        nan = float("nan")
        ours, copy, two_streams, one_session = import_figures(server) if "import" in ONLY else (nan, nan, nan, nan)
        six_ours, six_copy = six_column_figures(server) if "import" in ONLY else (nan, nan)
        context, direct = update_figures(server) if "update" in ONLY else (nan, nan)
        queue_seconds = queue_figures(server) if "queue" in ONLY else nan
        takeover_median, takeover_worst = takeover_figures(server) if "takeover" in ONLY else (nan, nan)
    finally:
        subprocess.run(["bash", SERVER, "stop", server], check=False)
    summary = {
        "benchmark": "postgresql", "rows": ROWS, "runs": RUNS,
        "import_s": {"batchrun": round(ours, 3), "psql \\copy": round(copy, 3), "psql two streams": round(two_streams, 3),
                     "batchrun one session": round(one_session, 3), "ratio": round(ours / copy, 2), "target": 0.85},
        "import_six_columns_s": {"rows": SIX_ROWS, "batchrun": round(six_ours, 3), "psql \\copy": round(six_copy, 3),
                                 "ratio": round(six_ours / six_copy, 2), "target": 0.85},
        "update_s": {"context": round(context, 3), "direct UPDATE": round(direct, 3), "ratio": round(context / direct, 2), "target": 2.0},
        "queue": {"items": ITEMS, "workers": 4, "seconds": round(queue_seconds, 2), "items_per_s": round(ITEMS / queue_seconds, 1),
                  "target_items_per_s": 100},
        "takeover_s": {"lease": LEASE, "median": round(takeover_median, 2), "worst": round(takeover_worst, 2), "target": LEASE + 2},
    }
    os.makedirs(".build-bench", exist_ok=True)
    json.dump(summary, open(".build-bench/postgres.json", "w"), indent=2)
    print(f"PostgreSQL, local throwaway server, medians of {RUNS}")
    print(f"  import {ROWS:,} flight rows   batchrun {ours:7.2f} s   psql \\copy {copy:7.2f} s   {ours / copy:5.2f}x (target at most 0.85x, issue 51)")
    print(f"  import {SIX_ROWS:,} six-column rows   batchrun {six_ours:7.2f} s   psql \\copy {six_copy:7.2f} s   {six_ours / six_copy:5.2f}x (target at most 0.85x, issue 51)")
    print(f"  batch-update {ROWS:,} rows     context  {context:7.2f} s   one UPDATE {direct:6.2f} s   {context / direct:5.2f}x (target at most 2x)")
    print(f"  {ITEMS:,} queued items, 4 workers   {queue_seconds:6.2f} s   {ITEMS / queue_seconds:6.1f} items/s (target at least 100)")
    print(f"  lease takeover ({LEASE:.0f} s lease)  median {takeover_median:.2f} s, worst {takeover_worst:.2f} s (target at most {LEASE + 2:.0f} s)")


if __name__ == "__main__":
    main()
