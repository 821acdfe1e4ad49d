#!/usr/bin/env python3
"""Fan-out batches (issue 47, section 17): `submit --fan-out load` of one job file whose `load`
reads 24 gzipped parts of 100,000 rows (bench/parts.py's shape), after `prepare` and before
`finish`, on a folder queue with an SQLite store and on a PostgreSQL queue whose store is the
same database (a throwaway local server this script starts and stops):
  - wall time, from `submit` to the completion's `done` in its worker's log (read every 10 ms;
    then checked with `queue --batch 1`), with 1 and
    with 2 worker processes (separate `batchrun worker` processes, as a fleet runs them; not
    `--once`, whose worker stops as soon as it finds nothing to claim, which is at once while
    another worker runs the batch's needs item), rows per second and the ratio 2 / 1; the CPU
    time of batchrun's processes (not the PostgreSQL server's);
  - what fanning out costs: the same file run by one `batchrun run` (the glob read as one feed)
    against the fan-out over 1 worker (target: at most 10% more time);
  - TRIALS (default 20) SIGKILL trials, alternating folder and PostgreSQL: a batch of 24 parts
    of TRIAL_ROWS (default 2,000) rows on a fresh queue (committed a row at a time on SQLite,
    10 rows on PostgreSQL, so that kills land inside parts), 3 workers (`--lease 2s` on
    PostgreSQL), KILLS (default 3) times at random 0.2-1.5 s intervals a random worker killed
    with SIGKILL (at random its whole process group, as a machine lost, or the worker alone, its
    item's process left running) and a new one started; then (KILL_COMPLETION=0 leaves it out)
    the worker whose log shows the completion starting, the same way. Once the completion is
    done: every row once, `prepare` once (a second run would fail on Started's key), `finish`
    once and after the last part (Finish holds 1 row, n = every row), every item of the batch
    done. Any trial that fails ends the script with status 1, its queue's state kept in
    .build-bench/fanout/failed-trial-N/.
Medians of RUNS (default 3), alternating (RUNS=0: the trials alone; SEED changes their kills);
KINDS=postgres (or folder) times one queue kind alone. PARALLEL=N gives the load step `parallel: N` (on PostgreSQL an item's import then writes over N
sessions, not the default's several).
Writes .build-bench/fanout.json.
    bench/fanout.py [PARTS] [ROWS_PER_PART]      (a release build)
"""
import atexit, glob, gzip, json, os, random, re, shutil, signal, statistics, subprocess, sys, time

PARTS = int(sys.argv[1]) if len(sys.argv) > 1 else 24
ROWS = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
RUNS = int(os.environ.get("RUNS", "3"))
TRIALS = int(os.environ.get("TRIALS", "20"))
TRIAL_ROWS = int(os.environ.get("TRIAL_ROWS", "2000"))
KILLS = int(os.environ.get("KILLS", "3"))
KILL_COMPLETION = os.environ.get("KILL_COMPLETION", "1") == "1"
KINDS = os.environ.get("KINDS", "").split()   # KINDS=postgres: time that queue kind alone (default: both)
if set(KINDS) - {"folder", "postgres"}:
    sys.exit(f"KINDS takes folder and postgres, not {' '.join(sorted(set(KINDS) - {'folder', 'postgres'}))}")
PARALLEL = os.environ.get("PARALLEL")   # the load step's `parallel:` (default: none, the store's default)
ROOT = os.path.abspath(".")
BIN = f"{ROOT}/.build/release/batchrun"
WORK = f"{ROOT}/.build-bench/fanout"
SERVER = f"{ROOT}/Tests/TestSupport/pg-throwaway.sh"
PSQL = f"/usr/lib/postgresql/{sorted(os.listdir('/usr/lib/postgresql'), key=int)[-1]}/bin/psql"

# `prepare` inserts Started 1 (a second run fails on its key, the default merge policy being
# `error`); `finish` inserts Finish 1 (the same) and sets n to the rows it counts, so n is every
# row only if it ran after the last part had committed.
JOB = """version: 1
store: {store}
entities:
  Reading:
    columns: {{ id: integer primary key, sensor: integer not null, value: real, label: text, taken_at: datetime, ok: boolean }}
  Started: {{ columns: {{ id: integer primary key }} }}
  Finish: {{ columns: {{ id: integer primary key, n: integer not null }} }}
jobs:
  prepare:
    steps:
      - insert: {{ entity: Started, rows: [{{ id: 1 }}] }}
  load:
    needs: [prepare]
    batch_size: {batch_size}
    steps:
      - insert: {{ entity: Reading, from: "{parts}/part-*.csv.gz"{parallel} }}
  finish:
    needs: [load]
    steps:
      - fetch: {{ entity: Reading, select: {{ n: "count(*)" }}, as: total }}
      - insert: {{ entity: Finish, rows: [{{ id: 1, n: 0 }}] }}
      - batch-update: {{ entity: Finish, set: {{ n: ":total" }}, where: "id = 1", params: {{ total: "${{total.n}}" }} }}
"""

GROUPS = set()   # process groups of the workers this script started (each worker leads its own)


@atexit.register
def kill_groups():
    for group in GROUPS:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass


def make_feeds(name, parts, rows):
    """PARTS gzipped parts of ROWS rows each in WORK/NAME (bench/parts.py's rows), made once."""
    folder = f"{WORK}/{name}"
    marker = f"{folder}/.made-{parts}x{rows}"
    if not os.path.exists(marker):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        generator = random.Random(47)
        for part in range(parts):
            lines = ["id,sensor,value,label,taken_at,ok\n"]
            for row in range(part * rows + 1, (part + 1) * rows + 1):
                lines.append(f"{row},{generator.randrange(5000)},{generator.random() * 100:.4f},label {generator.randrange(900)},"
                             f"2026-11-{1 + row % 28:02d}T{row % 24:02d}:{row % 60:02d}:00Z,{'true' if row % 3 else 'false'}\n")
            with gzip.open(f"{folder}/part-{part:03d}.csv.gz", "wt", compresslevel=6) as out:
                out.write("".join(lines))
        open(marker, "w").close()
    return folder


def psql(url, sql):
    return subprocess.run([PSQL, url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
                          check=True, capture_output=True, text=True).stdout.strip()


class Backend:
    """A fresh queue and store for each run: a folder queue with an SQLite store, or a new
    database on the throwaway server holding both the queue and the store."""

    def __init__(self, kind, server=None):
        self.kind, self.server, self.serial = kind, server, 0

    def fresh(self, label):
        self.serial += 1
        self.folder = f"{WORK}/{label}-{self.kind}"
        shutil.rmtree(self.folder, ignore_errors=True)
        os.makedirs(self.folder)
        if self.kind == "folder":
            self.queue = f"{self.folder}/queue"
            self.store = f"{self.folder}/store.sqlite"
            self.options = []
        else:
            name = f"fanout_{label.replace('-', '_')}_{self.serial}"
            psql(self.server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            psql(self.server, f"CREATE DATABASE {name}")
            self.queue = self.server.rsplit("/", 1)[0] + "/" + name
            self.store = f'{{ postgres: "{self.queue}" }}'
            self.options = ["--trust-submitters"]

    def drop(self):
        """Removes the queue and the store (2,400,000 rows are about 120 MB in SQLite)."""
        if self.kind == "postgres":
            psql(self.server, f"DROP DATABASE IF EXISTS {self.queue.rsplit('/', 1)[1]} WITH (FORCE)")
        shutil.rmtree(self.folder, ignore_errors=True)

    def job(self, parts, batch_size):
        path = f"{self.folder}/batch.yaml"
        with open(path, "w") as out:
            out.write(JOB.format(store=self.store, parts=parts, batch_size=batch_size,
                                 parallel=f", parallel: {PARALLEL}" if PARALLEL else ""))
        return path

    def query(self, sql):
        if self.kind == "folder":
            return subprocess.run(["sqlite3", self.store, sql], check=True, capture_output=True, text=True).stdout.strip()
        return psql(self.queue, sql)

    def time_in_runs(self):
        """The seconds the batch's items spent in their runs, by their reports (`elapsed_s`)."""
        if self.kind == "folder":
            return sum(json.load(open(report))["elapsed_s"] for report in glob.glob(f"{self.queue}/done/*.json"))
        return float(psql(self.queue, "SELECT sum((report::json->>'elapsed_s')::float) FROM _batchrun_queue WHERE batch = 1"))

    def batch(self):
        listed = subprocess.run([BIN, "queue", self.queue, "--batch", "1", "--format", "json"], capture_output=True, text=True)
        return json.loads(listed.stdout) if listed.returncode == 0 else {}

    def start_worker(self, log, extra=()):
        worker = subprocess.Popen([BIN, "worker", self.queue, "--jobs", "1", *self.options, *extra], stdin=subprocess.DEVNULL,
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        GROUPS.add(worker.pid)
        return worker

    def submit(self, job):
        submitted = subprocess.run([BIN, "submit", self.queue, job, "--fan-out", "load"], capture_output=True, text=True)
        assert submitted.returncode == 0 and "queued batch 1:" in submitted.stdout, submitted.stdout + submitted.stderr
        return submitted


def completion(batch):
    return (batch.get("completion") or {}).get("state")


def wait_done(backend, timeout, interval):
    """Polls `queue --batch 1` until the completion is done; the batch as last seen, and whether it was."""
    deadline = time.perf_counter() + timeout
    while True:
        batch = backend.batch()
        if completion(batch) == "done":
            return batch, True
        if time.perf_counter() > deadline:
            return batch, False
        time.sleep(interval)


def wait_logged(logs, items, timeout):
    """Waits until the workers' logs show ITEMS items done (the batch's every item: its needs,
    its parts, its completion, which ends last), reading the logs every 10 ms: polling `queue`
    with a process 20 times a second took a share of the 2 cores from what it measured. The
    seconds it waited past TIMEOUT mean no."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        done = sum(bool(re.match(r"\S+  done ", line)) for log in logs for line in open(log.name))
        if done >= items:
            return True
        time.sleep(0.01)
    return False


def reap(process, timeout):
    """Waits up to TIMEOUT for PROCESS; the CPU seconds (user and system) of it and of the
    descendants it waited for (a worker's items), or None while it runs."""
    deadline = time.perf_counter() + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        if time.perf_counter() > deadline:
            return None
        time.sleep(0.01)


def stop(workers):
    """SIGTERM (nothing runs once the completion is done), then SIGKILL what is left of each group;
    the CPU seconds of the workers and their items."""
    for worker in workers:
        if worker.returncode is None:
            worker.send_signal(signal.SIGTERM)
    cpu = 0.0
    for worker in workers:
        if worker.returncode is None:
            cpu += reap(worker, 20) or 0.0
    for worker in workers:
        try:
            os.killpg(worker.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if worker.returncode is None:
            reap(worker, 60)
        GROUPS.discard(worker.pid)
    return cpu


def check_loaded(backend, total):
    """The rows, Started and Finish as the store has them."""
    rows, distinct = (int(value) for value in backend.query("SELECT count(*) || ' ' || count(DISTINCT id) FROM reading").split())
    started = int(backend.query("SELECT count(*) FROM started"))
    finish = backend.query("SELECT id || ' ' || n FROM finish").split("\n")
    return {"rows": rows, "distinct": distinct, "started": started, "finish": finish,
            "ok": rows == distinct == total and started == 1 and finish == [f"1 {total}"]}


# Wall times

def run_once(backend, parts):
    """Seconds of one `batchrun run` of the job file, and its CPU seconds."""
    backend.fresh("run")
    job = backend.job(parts, 10000)
    started = time.perf_counter()
    process = subprocess.Popen([BIN, "run", job, "--quiet"], stdout=subprocess.DEVNULL)
    cpu = reap(process, 600)
    seconds = time.perf_counter() - started
    assert process.returncode == 0, f"{backend.kind} run: exit {process.returncode}"
    loaded = check_loaded(backend, PARTS * ROWS)
    assert loaded["ok"], f"{backend.kind} run: {loaded}"
    backend.drop()
    return {"seconds": seconds, "cpu": cpu}


def fan_out(backend, parts, workers):
    """Seconds from submit to the completion's end in its worker's log (then checked with `queue
    --batch 1`), the CPU seconds of submit, the workers
    and their items, the seconds inside the items' runs (their reports), and the items each
    worker ran."""
    backend.fresh(f"fanout{workers}")
    job = backend.job(parts, 10000)
    logs = [open(f"{backend.folder}/worker-{n}.log", "w") for n in range(workers)]
    started = time.perf_counter()
    submit = subprocess.Popen([BIN, "submit", backend.queue, job, "--fan-out", "load"], stdout=subprocess.PIPE)
    output = submit.stdout.read().decode()
    cpu = reap(submit, 60)
    assert submit.returncode == 0 and "queued batch 1:" in output, output
    processes = [backend.start_worker(log) for log in logs]
    logged = wait_logged(logs, PARTS + 2, 600)
    seconds = time.perf_counter() - started
    batch, done = wait_done(backend, 60 if logged else 1, 0.05)
    cpu += stop(processes)
    for log in logs:
        log.close()
    assert done, f"{backend.kind}, {workers} workers: the batch did not end: {batch}"
    loaded = check_loaded(backend, PARTS * ROWS)
    assert loaded["ok"] and batch.get("parts") == {"done": PARTS} and batch.get("rows") == PARTS * ROWS, \
        f"{backend.kind}, {workers} workers: {loaded} {batch}"
    split = [sum(bool(re.match(r"\S+  running ", line)) for line in open(log.name)) for log in logs]
    inside = backend.time_in_runs()
    backend.drop()
    return {"seconds": seconds, "cpu": cpu, "in_runs": inside, "split": split}


def measure(backend, parts):
    """RUNS rounds of: one run, the fan-out over 1 worker, over 2 workers."""
    shapes = {"one run": lambda: run_once(backend, parts), "fan-out, 1 worker": lambda: fan_out(backend, parts, 1),
              "fan-out, 2 workers": lambda: fan_out(backend, parts, 2)}
    rounds = {shape: [] for shape in shapes}
    for _ in range(RUNS):
        for shape, measured in shapes.items():
            rounds[shape].append(measured())
    return rounds


# SIGKILL trials

def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return []


def in_flight(log):
    """The item a worker's log shows running and not ended (its key: a folder item's name, a
    PostgreSQL item's id), or None."""
    lines = open(log).read().splitlines()
    for index in range(len(lines) - 1, -1, -1):
        started = re.match(r"\S+  running (.+) \(process \d+\)$", lines[index])
        if started:
            key = started.group(1)
            ended = any(key in line for line in lines[index + 1:])
            return None if ended else key.split(" ")[0]
    return None


def trial(number, backend, parts, generator):
    total = PARTS * TRIAL_ROWS
    backend.fresh(f"trial{number:02d}")
    # A commit a row (folder, SQLite) or every 10 rows (PostgreSQL, whose commits cost more): a
    # batch lasts about 6 s without kills, so the kills land inside parts, between their commits.
    job = backend.job(parts, 1 if backend.kind == "folder" else 10)
    extra = ["--lease", "2s"] if backend.kind == "postgres" else []
    logs, workers, kills = [], [], []

    def start():
        log = open(f"{backend.folder}/worker-{len(logs)}.log", "w")
        logs.append(log)
        workers.append(backend.start_worker(log, extra))

    started = time.perf_counter()
    backend.submit(job)
    for _ in range(3):
        start()
    for _ in range(KILLS):
        time.sleep(generator.uniform(0.2, 1.5))
        if completion(backend.batch()) == "done":
            break
        alive = [worker for worker in workers if worker.poll() is None]
        victim = generator.choice(alive)
        running = len(children(victim.pid))   # its item's process (a PostgreSQL worker's runner, idle or not)
        item = in_flight(logs[workers.index(victim)].name)
        whole = generator.random() < 0.5
        if whole:
            os.killpg(victim.pid, signal.SIGKILL)   # the worker and its items' processes: a machine lost
        else:
            victim.send_signal(signal.SIGKILL)      # the worker alone: its item's process is left running
        victim.wait()
        kills.append({"at": round(time.perf_counter() - started, 2), "group": whole, "item_processes": running, "item": item})
        start()
    if KILL_COMPLETION:
        # Then the worker that starts the completion, as soon as its log says so (the completion
        # runs for some 20-50 ms: the kill lands inside it or just after it).
        key = "-completion.yaml" if backend.kind == "folder" else f"running {PARTS + 2} "   # PostgreSQL: ids 1, 2-25, 26
        deadline = time.perf_counter() + 120
        victim = None
        while victim is None and time.perf_counter() < deadline:
            for worker, log in zip(workers, logs):
                if worker.returncode is None and any(key in line and "running" in line for line in open(log.name)):
                    victim = worker
                    break
            else:
                time.sleep(0.002)
        if victim is not None:
            whole = number % 4 in (1, 2)   # alternately, on each queue kind
            running = len(children(victim.pid))
            os.killpg(victim.pid, signal.SIGKILL) if whole else victim.send_signal(signal.SIGKILL)
            victim.wait()
            kills.append({"at": round(time.perf_counter() - started, 2), "group": whole, "item_processes": running,
                          "item": in_flight(logs[workers.index(victim)].name), "aimed_at_completion": True})
            start()
    batch, done = wait_done(backend, 120, 0.2)
    seconds = time.perf_counter() - started
    stop(workers)
    for log in logs:
        log.close()
    try:
        loaded = check_loaded(backend, total) if done else {"ok": False}
    except (subprocess.CalledProcessError, ValueError) as error:   # a table missing, say
        loaded = {"ok": False, "error": str(error)}
    listing = subprocess.run([BIN, "queue", backend.queue, "--format", "json"], capture_output=True, text=True).stdout
    items = [item for item in json.loads(listing or "{}").get("items", []) if item.get("batch") == 1]
    states = sorted({item.get("state") for item in items})
    completion_id = str((batch.get("completion") or {}).get("id"))
    kinds = {str(item.get("id", item.get("name"))): "part" if "part" in item else
             "completion" if str(item.get("id", item.get("name"))) == completion_id else "needs" for item in items}
    for kill in kills:   # what the killed worker was running: a part, the needs, the completion, or nothing
        kill["item"] = kinds.get(kill["item"], "unknown") if kill["item"] else "idle"
    ok = (done and loaded["ok"] and batch.get("parts") == {"done": PARTS} and len(items) == PARTS + 2 and states == ["done"])
    result = {"trial": number, "queue": backend.kind, "ok": ok, "seconds": round(seconds, 2), "kills": kills,
              "batch": batch, "loaded": loaded, "items": len(items), "states": states,
              "batch_rows_shown": batch.get("rows"), "takeovers": sum(
                  sum("taking over" in line for line in open(log.name)) for log in logs)}
    if not ok:
        # Keep what the queue and the store say, for the bug report.
        kept = f"{WORK}/failed-trial-{number:02d}"
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(backend.folder, kept)
        with open(f"{kept}/queue.json", "w") as out:
            out.write(listing)
        with open(f"{kept}/trial.json", "w") as out:
            json.dump(result, out, indent=2)
        if backend.kind == "postgres":
            with open(f"{kept}/queue-table.txt", "w") as out:
                out.write(psql(backend.queue, "SELECT id, name, state, batch, part, rows, attempts, worker, started_at, ended_at, status, "
                                              "error FROM _batchrun_queue ORDER BY id"))
        result["kept"] = kept
    else:
        backend.drop()
    return result


def loadavg():
    return [float(x) for x in open("/proc/loadavg").read().split()[:3]]


def main():
    for kept in glob.glob(f"{WORK}/failed-trial-*"):
        shutil.rmtree(kept)   # an earlier run's
    big = make_feeds(f"data-{PARTS}x{ROWS}", PARTS, ROWS)
    small = make_feeds(f"trial-data-{PARTS}x{TRIAL_ROWS}", PARTS, TRIAL_ROWS)
    total = PARTS * ROWS
    summary = {"benchmark": "fanout", "parts": PARTS, "rows_per_part": ROWS, "runs": RUNS, "load": {"start": loadavg()},
               "backends": {}}
    server = subprocess.run(["bash", SERVER, "start", "--owner", str(os.getpid())], check=True, capture_output=True,
                            text=True).stdout.strip().splitlines()
    try:
        backends = {"folder": Backend("folder"), "postgres": Backend("postgres", server[-1])}
        if RUNS:
            print(f"Fan-out batches: {PARTS} gzipped parts of {ROWS:,} rows ({total:,} rows), medians of {RUNS}, alternating; "
                  f"a fan-out from submit to its completion done in its worker's log (load average {summary['load']['start'][0]:.2f})", flush=True)
        for kind, backend in backends.items() if RUNS else ():   # RUNS=0: the trials alone
            if KINDS and kind not in KINDS: continue
            rounds = measure(backend, big)
            median = {shape: {key: statistics.median(r[key] for r in values) for key in ("seconds", "cpu")}
                      for shape, values in rounds.items()}
            seconds = {shape: figures["seconds"] for shape, figures in median.items()}
            one, two, run = seconds["fan-out, 1 worker"], seconds["fan-out, 2 workers"], seconds["one run"]
            ratio, cost = one / two, one / run - 1
            cpu_cost = median["fan-out, 1 worker"]["cpu"] / median["one run"]["cpu"] - 1
            inside = statistics.median(r["in_runs"] for r in rounds["fan-out, 1 worker"])
            # Each round's own ratios too: the machine's pace moves from minute to minute.
            paired_cost = [f["seconds"] / r["seconds"] - 1 for f, r in zip(rounds["fan-out, 1 worker"], rounds["one run"])]
            paired_ratio = [f["seconds"] / t["seconds"] for f, t in zip(rounds["fan-out, 1 worker"], rounds["fan-out, 2 workers"])]
            splits = [r["split"] for r in rounds["fan-out, 2 workers"]]
            summary["backends"][kind] = {
                "seconds": {shape: round(value, 3) for shape, value in seconds.items()},
                "cpu_seconds": {shape: round(figures["cpu"], 3) for shape, figures in median.items()},
                "rounds": {shape: [{key: (round(value, 3) if isinstance(value, float) else value) for key, value in r.items()}
                                   for r in values] for shape, values in rounds.items()},
                "rows_per_s": {shape: round(total / value) for shape, value in seconds.items()},
                "two_workers_ratio": round(ratio, 2), "fan_out_cost": round(cost, 3), "fan_out_cpu_cost": round(cpu_cost, 3),
                "fan_out_cost_target": 0.10, "fan_out_1_seconds_in_runs": round(inside, 3),
                "fan_out_cost_by_round": [round(x, 3) for x in paired_cost], "two_workers_ratio_by_round": [round(x, 2) for x in paired_ratio],
            }
            print(f"  {'folder queue, SQLite store' if kind == 'folder' else 'PostgreSQL queue and store (CPU: batchrun only)'}"
                  f" (load average {loadavg()[0]:.2f}):")
            for shape, value in seconds.items():
                line = f"    {shape:19} {value:6.2f} s  {total / value:9,.0f} rows/s  CPU {median[shape]['cpu']:5.2f} s"
                if shape == "fan-out, 1 worker":
                    line += (f"  ({cost * 100:+.1f}% time (by round {', '.join(f'{x * 100:+.0f}%' for x in paired_cost)}), "
                             f"{cpu_cost * 100:+.1f}% CPU against one run, "
                             f"{(one - run) / PARTS * 1000:+.0f} ms a part; target at most +10%; {inside:.2f} s inside the "
                             f"{PARTS + 2} items' runs)")
                elif shape == "fan-out, 2 workers":
                    line += (f"  ({ratio:.2f}x the rows per second of 1 worker (by round "
                             f"{', '.join(f'{x:.2f}x' for x in paired_ratio)}); items per worker {splits})")
                print(line, flush=True)
        summary["load"]["after_wall_times"] = loadavg()
        trials = []
        print(f"{'  ' if RUNS else 'Fan-out batches: '}SIGKILL trials: {TRIALS}, alternating folder and PostgreSQL, each a fresh queue, {PARTS} parts of "
              f"{TRIAL_ROWS:,} rows, 3 workers, up to {KILLS} kills", flush=True)
        generator = random.Random(int(os.environ.get("SEED", "47")))
        for number in range(1, TRIALS + 1):
            kind = "folder" if number % 2 else "postgres"
            outcome = trial(number, backends[kind], small, generator)
            trials.append(outcome)
            kills = ", ".join(f"{k['at']} s ({'group' if k['group'] else 'worker'}, {k['item']})" for k in outcome["kills"])
            print(f"    trial {number:2}  {kind:8}  {'ok    ' if outcome['ok'] else 'FAILED'}  {outcome['seconds']:5.1f} s  "
                  f"kills at {kills or 'none'}  takeovers {outcome['takeovers']}"
                  + ("" if outcome["ok"] else f"  kept in {outcome['kept']}: {outcome['batch']} {outcome['loaded']}"), flush=True)
    finally:
        subprocess.run(["bash", SERVER, "stop", server[0]], check=False)
    summary["load"]["end"] = loadavg()
    passed = [t for t in trials if t["ok"]]
    kills = [k for t in trials for k in t["kills"]]
    summary["trials"] = trials
    summary["trials_passed"] = len(passed)
    if not trials:
        json.dump(summary, open(f"{ROOT}/.build-bench/fanout.json", "w"), indent=2)
        return
    running = {kind: sum(k["item"] == kind for k in kills) for kind in ("part", "needs", "completion", "idle", "unknown")}
    aimed = [k for k in kills if k.get("aimed_at_completion")]
    if aimed:
        print(f"  {len(aimed)} kills aimed at the completion's worker: {sum(k['item'] == 'completion' for k in aimed)} landed while "
              f"its log showed the completion running (the rest just after it ended)")
    print(f"  {len(kills)} kills ({sum(k['group'] for k in kills)} of a worker's whole process group, "
          f"{sum(not k['group'] for k in kills)} of the worker alone; the worker was running "
          + ", ".join(f"{kind} {count}" for kind, count in running.items() if count)
          + f"), {sum(t['takeovers'] for t in trials)} takeovers; a trial took "
          f"{statistics.median(t['seconds'] for t in trials):.1f} s (median), {max(t['seconds'] for t in trials):.1f} s at most")
    shown = [t for t in passed if t["batch_rows_shown"] != PARTS * TRIAL_ROWS]
    if shown:
        print(f"  note: in {len(shown)} passed trials `queue --batch` showed other rows than {PARTS * TRIAL_ROWS:,}: "
              + ", ".join(f"trial {t['trial']} {t['batch_rows_shown']}" for t in shown))
    print(f"  {len(passed)} of {len(trials)} trials: every row once, completion once, after the last part "
          f"(load average {summary['load']['end'][0]:.2f})")
    os.makedirs(f"{ROOT}/.build-bench", exist_ok=True)
    json.dump(summary, open(f"{ROOT}/.build-bench/fanout.json", "w"), indent=2)
    if len(passed) != len(trials):
        print(f"FAILED: {len(trials) - len(passed)} of {len(trials)} trials did not end with every row once and the completion "
              f"once (their queues are kept in {WORK}/failed-trial-*)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
