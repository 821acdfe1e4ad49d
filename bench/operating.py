#!/usr/bin/env python3
"""Operating a queue (issue 48), on a queue folder and on a PostgreSQL queue (a throwaway local
server this script starts and stops):
  - pause to the last claim: 3 worker processes (`worker QUEUE --jobs 1 --quiet`, and
    `--trust-submitters --allow-hooks` on PostgreSQL) busy with a stream of short items (one
    `fetch` on an SQLite store, `on_complete: "sleep 0.2"`), about 30 items pending;
    `batchrun pause QUEUE`, then the time from the moment the command returned to the last claim
    after it (folder: pending/ and running/ listed every 5 ms, a claim is an item seen leaving
    pending/; PostgreSQL: each item's `started_at`, set by the claim, read afterwards), watched for
    WATCH seconds (default 3); TRIALS (default 5) pauses, median and worst (target: at most 1 s);
  - prune of PRUNED (default 100,000) finished items, 30 days old (folder: files written straight
    into done/ with their .json and .log, mtimes set back; PostgreSQL: one INSERT ... SELECT
    generate_series): the time of `batchrun prune QUEUE --older-than 14d` (336h, the same, when
    the build refuses 14d, which is reported as a bug) and the count it prints (target: at most
    10 s, every item pruned), and meanwhile the claim latency of one
    worker process (`--workers 2`, so an item still running never holds the next one back): an
    item submitted every 100 ms with `batchrun submit`, from the moment the command returned to
    the claim (folder: the item seen in running/, or gone from pending/, listed every 5 ms;
    PostgreSQL: its `started_at` minus the submit's return time, one clock), median and worst
    during the prune (its first LATENCY_WINDOW, 60 s) and, as a baseline, without one (target:
    at most 50 ms during the prune). A prune still running after PRUNE_TIMEOUT (default 180 s)
    is killed, and the items it left are counted.
    An item claimed before its submit command had returned counts 0 ms (and is counted apart).
    Also printed: submission to claim (a folder item's name carries its submission time to the
    millisecond, PostgreSQL's `submitted_at`), how many items came while both of the worker's
    slots were busy (their claim waited for a run to end), and how long the items ran.
  - the live page's first load (`batchrun serve`): a queue of PAGE_DONE (default 10,000) done
    items, PAGE_FAILED (5) failed and PAGE_PENDING (5) pending ones and PAGE_AUDIT (1,000) audit
    lines, each kind made with the queue's own means (one item of each done and failed by a
    worker, the done one copied: folder files, PostgreSQL one INSERT ... SELECT generate_series;
    the audit lines into the folder's audit.log, or one INSERT ... SELECT into _batchrun_audit);
    `serve QUEUE --listen 127.0.0.1:0`, then GET / over a new connection each: the first one
    once the server has printed where it listens (cold: a new process, its first snapshot), and
    PAGE_LOADS (20) more, each PAGE_SPACING (1.1 s) after the previous one came (the server keeps
    a snapshot for 1 s: each takes a new one; a page from the cache is counted), median and
    worst; the same with `--actions --token-file F` for a reader signed in (POST /sign-in, its
    `batchrun_session` cookie); each with the page's size and the CPU `serve` spent (target:
    under 200 ms, cold and warm).
The machine's load average and its CPU and I/O pressure (/proc/pressure) are sampled every
second and printed per phase: a folder's prune unlinks 300,000 files, and its time follows the
I/O of everything else on the machine.
Writes .build-bench/operating.json.
    bench/operating.py [TRIALS] [PRUNED]
        (.build/release/batchrun when it is newer than the last commit touching Sources/, else
         .build/debug/batchrun, and says so; BIN=path overrides; WATCH=seconds after each pause;
         ONLY=folder or ONLY=postgres: one kind of queue; PARTS=pause,prune,page (the default):
         which measurements)
"""
import atexit, calendar, http.client, json, os, re, resource, shutil, signal, statistics, subprocess, sys, threading, time

TRIALS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
PRUNED = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
WATCH = float(os.environ.get("WATCH", "3"))
KINDS = [kind for kind in ("folder", "postgres") if kind in os.environ.get("ONLY", "folder,postgres").split(",")]
PARTS = os.environ.get("PARTS", "pause,prune,page").split(",")
PENDING = 30            # items kept waiting behind the three busy workers at each pause
SUBMIT_EVERY = 0.1      # seconds between two submits while claim latency is measured
BASELINE_SUBMITS = 30   # submits without a prune running
POLL = 0.005            # a folder's pending/ and running/ listed this often
LATENCY_WINDOW = 60     # seconds of submits at most during a prune (enough samples; a long prune then runs alone)
PRUNE_TIMEOUT = float(os.environ.get("PRUNE_TIMEOUT", "180"))   # a prune still running then is killed (the run stays bounded)
PAGE_DONE = int(os.environ.get("PAGE_DONE", "10000"))   # the live page's queue: done items,
PAGE_FAILED, PAGE_PENDING, PAGE_AUDIT = 5, 5, 1_000     # failed and pending ones, audit lines
PAGE_LOADS, PAGE_SPACING = 20, 1.1   # loads after the first, each this many seconds after the last came (a snapshot lasts 1 s)
PAGE_TARGET_MS = 200
TOKEN = "0123456789abcdef0123"       # `alice`'s, in serve's --token-file
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = f"{ROOT}/.build-bench/operating"
SERVER = f"{ROOT}/Tests/TestSupport/pg-throwaway.sh"
TICKS = os.sysconf("SC_CLK_TCK")
PSQL = f"/usr/lib/postgresql/{sorted(os.listdir('/usr/lib/postgresql'), key=int)[-1]}/bin/psql"

SLOW = """version: 1
store: {store}
entities:
  T: {{ columns: {{ id: integer primary key }} }}
jobs:
  wait:
    on_complete: "sleep 0.2"
    steps:
      - fetch: {{ entity: T }}
"""
# The same job without its wait.
QUICK = SLOW.replace('    on_complete: "sleep 0.2"\n', "")
# A failed item: its feed's one value is no integer (submit checks the file is there, not what it holds)
BROKEN = """version: 1
store: {store}
entities:
  T: {{ columns: {{ id: integer primary key }} }}
jobs:
  broken:
    steps:
      - insert: {{ entity: T, from: {folder}/broken.csv }}
"""


def choose_binary():
    """The release build when it is newer than the last commit touching Sources/, else the debug
    build (with the reason); BIN overrides both."""
    if os.environ.get("BIN"):
        return os.path.abspath(os.environ["BIN"]), "BIN"
    last = int(subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%ct", "--", "Sources"], check=True,
                              capture_output=True, text=True).stdout.strip() or 0)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(last))
    release, debug = f"{ROOT}/.build/release/batchrun", f"{ROOT}/.build/debug/batchrun"
    if os.path.exists(release) and os.path.getmtime(release) > last:
        return release, "release"
    why = "missing" if not os.path.exists(release) else f"older than the last commit touching Sources/ ({stamp})"
    note = f"debug build: .build/release/batchrun is {why}"
    if not os.path.exists(debug):
        sys.exit(f"operating.py: no usable build ({note}, and .build/debug/batchrun is missing): run `make build`")
    if os.path.getmtime(debug) <= last:
        note += "; the debug build is older than that commit too (it may lack its changes)"
    return debug, note


BIN, BUILD_NOTE = choose_binary()
GROUPS = set()   # process groups of the workers this script started (each worker leads its own)


@atexit.register
def kill_groups():
    for group in GROUPS:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass


def psql(url, sql):
    return subprocess.run([PSQL, url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
                          check=True, capture_output=True, text=True).stdout.strip()


def batchrun(*arguments):
    return subprocess.run([BIN, *arguments], check=True, capture_output=True, text=True).stdout


def pressure(kind):
    """/proc/pressure/KIND's `some avg10` (the share of the last 10 s some task waited for the CPU or
    for I/O), None without PSI."""
    try:
        return float(open(f"/proc/pressure/{kind}").readline().split()[1].split("=")[1])
    except (OSError, IndexError, ValueError):
        return None


class LoadSampler(threading.Thread):
    """/proc/loadavg's 1-minute figure and the CPU and I/O pressure once a second, each sample
    with its phase."""

    def __init__(self):
        super().__init__(daemon=True)
        self.phase, self.samples, self.done = "start", [], threading.Event()

    def run(self):
        while not self.done.is_set():
            self.samples.append((self.phase, float(open("/proc/loadavg").read().split()[0]), pressure("cpu"), pressure("io")))
            self.done.wait(1)

    def of(self, phase):
        rows = [sample[1:] for sample in self.samples if sample[0] == phase]
        if not rows:
            return None
        figures = {}
        for index, name in enumerate(("load_1min", "cpu_pressure_pct", "io_pressure_pct")):
            values = [row[index] for row in rows if row[index] is not None]
            if values:
                figures[name] = {"mean": round(statistics.mean(values), 2), "max": max(values)}
        return figures


LOAD = LoadSampler()


class FolderWatch(threading.Thread):
    """Lists a queue folder's pending/ and running/ every POLL seconds and keeps, for each item,
    when it was first seen claimed (in running/, or gone from pending/) and when it was first
    seen gone from running/ (wall clock, POLL's resolution)."""

    def __init__(self, queue):
        super().__init__(daemon=True)
        self.queue, self.claimed, self.left, self.done = queue, {}, {}, threading.Event()

    def run(self):
        pending_before, running_before = set(), set()
        while not self.done.is_set():
            running = {name for name in os.listdir(f"{self.queue}/running") if name.endswith(".yaml")}
            pending = {name for name in os.listdir(f"{self.queue}/pending") if name.endswith(".yaml")}
            now = time.time()
            for name in running:
                self.claimed.setdefault(name, now)
            for name in pending_before - pending:
                self.claimed.setdefault(name, now)
            for name in running_before - running:
                self.left.setdefault(name, now)
            pending_before, running_before = pending, running
            time.sleep(POLL)

    def stop(self):
        self.done.set()
        self.join()


class Backend:
    """A queue folder, or a database of the throwaway server; `label` names the folder or database."""

    def __init__(self, kind, label, server=None):
        self.kind = kind
        self.folder = f"{WORK}/{kind}-{label}"
        shutil.rmtree(self.folder, ignore_errors=True)
        os.makedirs(self.folder)
        self.store = f"{self.folder}/store.sqlite"
        if kind == "folder":
            self.queue = f"{self.folder}/q"
            for sub in ("pending", "running", "done"):
                os.makedirs(f"{self.queue}/{sub}")
            self.options = []
        else:
            name = f"operating_{label}"
            psql(server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            psql(server, f"CREATE DATABASE {name}")
            self.queue = server.rsplit("/", 1)[0] + "/" + name
            self.options = ["--trust-submitters"]
            batchrun("queue", self.queue)   # the table and its indexes

    def job(self, name, text):
        path = f"{self.folder}/{name}.yaml"
        with open(path, "w") as out:
            out.write(text.format(store=self.store, folder=self.folder))
        return path

    def submit(self, job, count=1):
        """Submits `job` count times in one command; the items' names (folder) or ids (PostgreSQL)."""
        lines = batchrun("submit", self.queue, *([job] * count)).splitlines()
        if self.kind == "folder":   # queued X as pending/NAME
            return [line.rsplit("pending/", 1)[1] for line in lines if line.startswith("queued ")]
        return [int(line.split(" as item ", 1)[1].split()[0]) for line in lines if line.startswith("queued ")]

    def pending(self):
        if self.kind == "folder":
            return len([n for n in os.listdir(f"{self.queue}/pending") if n.endswith(".yaml")])
        return int(psql(self.queue, "SELECT count(*) FROM _batchrun_queue WHERE state = 'pending'"))

    def running(self):
        if self.kind == "folder":
            return len([n for n in os.listdir(f"{self.queue}/running") if n.endswith(".yaml")])
        return int(psql(self.queue, "SELECT count(*) FROM _batchrun_queue WHERE state = 'running'"))

    def claim_times(self, since=None, ids=None):
        """PostgreSQL: item id -> its first claim (epoch seconds, the server's clock: this machine's)."""
        return {key: times[0] for key, times in self.item_times(since, ids).items()}

    def item_times(self, since=None, ids=None):
        """PostgreSQL: item id -> (started_at, submitted_at, ended_at or None), epoch seconds."""
        where = f"id IN ({','.join(map(str, ids))})" if ids else f"started_at >= to_timestamp({since})"
        rows = psql(self.queue, f"SELECT id, extract(epoch FROM started_at), extract(epoch FROM submitted_at), "
                                f"coalesce(extract(epoch FROM ended_at)::text, '') FROM _batchrun_queue "
                                f"WHERE started_at IS NOT NULL AND {where}")
        times = {}
        for line in rows.splitlines():
            key, started, submitted, ended = line.split("|")
            times[int(key)] = (float(started), float(submitted), float(ended) if ended else None)
        return times

    def start_worker(self, *extra):
        worker = subprocess.Popen([BIN, "worker", self.queue, "--jobs", "1", "--quiet", *self.options, *extra],
                                  stdout=subprocess.DEVNULL, stderr=open(f"{self.folder}/workers.err", "a"), start_new_session=True)
        GROUPS.add(worker.pid)
        return worker


def cpu_seconds(pid):
    """User and system time of a process and of its children that ended, from /proc."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICKS


def stop_workers(workers):
    for worker in workers:
        worker.send_signal(signal.SIGINT)
    for worker in workers:
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        try:
            os.killpg(worker.pid, signal.SIGKILL)   # anything it left
        except ProcessLookupError:
            pass
        GROUPS.discard(worker.pid)


def pause_to_last_claim(backend):
    """TRIALS pauses of 3 busy workers; for each, the seconds from `pause` returning to the last
    claim after it (0 when none), with the counts around it."""
    job = backend.job("slow", SLOW)
    hooks = [] if backend.kind == "folder" else ["--allow-hooks"]
    watch = FolderWatch(backend.queue) if backend.kind == "folder" else None
    if watch:
        watch.start()
    workers = [backend.start_worker(*hooks) for _ in range(3)]
    trials = []
    try:
        for trial in range(TRIALS):
            batchrun("resume", backend.queue)
            # the stream: three workers busy, PENDING or more waiting, for 1.5 s
            warm = time.time() + 1.5
            while time.time() < warm or backend.pending() < PENDING:
                waiting = backend.pending()
                if waiting < PENDING + 5:
                    backend.submit(job, PENDING + 5 - waiting)
                time.sleep(0.1)
            running_at_pause = backend.running()
            issued = time.time()
            batchrun("pause", backend.queue)
            returned = time.time()
            pending_at_pause = backend.pending()
            time.sleep(WATCH)
            if watch:
                claims = [t for t in list(watch.claimed.values()) if t >= issued]
            else:
                claims = list(backend.claim_times(since=issued - 0.001).values())
            after = [t for t in claims if t > returned]
            trials.append({
                "pause_command_s": round(returned - issued, 4),
                "last_claim_after_pause_s": round(max(after) - returned, 4) if after else 0.0,
                "last_claim_after_pause_issued_s": round(max(claims) - issued, 4) if claims else None,
                "claims_during_pause_command": len(claims) - len(after), "claims_after_return": len(after),
                "running_at_pause": running_at_pause, "pending_at_pause": pending_at_pause,
                "pending_after_watch": backend.pending(),
            })
    finally:
        stop_workers(workers)
        if watch:
            watch.stop()
    figures = [t["last_claim_after_pause_s"] for t in trials]
    return {"trials": trials, "median_s": round(statistics.median(figures), 4), "max_s": round(max(figures), 4),
            "watched_s": WATCH, "target_s": 1.0}


def finished_items(backend):
    """PRUNED done items that ended 30 days ago."""
    started = time.perf_counter()
    old = time.time() - 30 * 86400
    if backend.kind == "folder":
        done = f"{backend.queue}/done"
        body = QUICK.format(store=backend.store).encode()
        report, log = b'{"status":"ok"}\n', b"Done in 0.00s. OK=1 ERROR=0 TIMED_OUT=0 SKIP=0 CANCELLED=0 TOTAL=1\n"
        for n in range(PRUNED):
            # distinct names of the shape submit gives: 20261101THHMMSSmmm-NNNN-x.yaml
            minutes, rest = divmod(n, 60_000)
            name = f"{done}/20261101T{minutes // 60:02d}{minutes % 60:02d}{rest // 1000:02d}{rest % 1000:03d}-{n % 10_000:04d}-x.yaml"
            for path, content in ((name, body), (name + ".json", report), (name + ".log", log)):
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.write(descriptor, content)
                os.close(descriptor)
                os.utime(path, (old, old))
    else:
        psql(backend.queue, f"""
            INSERT INTO _batchrun_queue (name, job_text, directory, state, status, ended_at, started_at, submitted_at, run_at)
            SELECT 'x.yaml', 'version: 1', '{backend.folder}', 'done', 0, now() - interval '30 days',
                   now() - interval '30 days', now() - interval '30 days', now() - interval '30 days'
            FROM generate_series(1, {PRUNED});
            ANALYZE _batchrun_queue""")
    return time.perf_counter() - started


def name_time(name):
    """When a folder item was submitted, from its name (YYYYMMDDTHHMMSSmmm, UTC)."""
    return calendar.timegm(time.strptime(name[:15], "%Y%m%dT%H%M%S")) + int(name[15:18]) / 1000


def latencies(backend, watch, submitted):
    """For each item submitted: seconds from its submit's return to its claim (negative: claimed
    before the command had returned), from its submission (the name's time on a folder,
    `submitted_at` on PostgreSQL) to its claim, and how many of the worker's items were running
    as it was submitted (2: both slots busy, the claim waited for one), and how long it ran
    (claim to end). Waits up to 10 s for
    the claims; also the items never claimed."""
    keys = [key for key, _ in submitted]
    deadline = time.time() + 10
    while True:
        if watch:
            times = {name: (claimed, name_time(name), watch.left.get(name)) for name, claimed in dict(watch.claimed).items()}
        else:
            times = backend.item_times(ids=keys)
        if all(key in times and times[key][2] is not None for key in keys) or time.time() > deadline:
            break
        time.sleep(0.1)
    records = []
    for key, returned in submitted:
        if key not in times:
            continue
        claimed, enqueued, ended = times[key]
        # the worker's other items running as this one was submitted: 2, both slots were busy
        busy = sum(1 for other, (c, _, e) in times.items() if other != key and c <= enqueued and (e is None or e > enqueued))
        records.append({"after_return": claimed - returned, "after_submission": claimed - enqueued, "busy_slots": busy,
                        "run": (ended - claimed) if ended is not None else None})
    return records, [key for key in keys if key not in times]


def summarize(records):
    def figures(values):
        clamped = [max(0.0, v) for v in values]
        return (round(1000 * statistics.median(clamped), 1) if values else None, round(1000 * max(clamped), 1) if values else None)
    after_return = [r["after_return"] for r in records]
    after_submission = [r["after_submission"] for r in records]
    free = [r["after_return"] for r in records if r["busy_slots"] < 2]
    runs = [r["run"] for r in records if r["run"] is not None]
    median, worst = figures(after_return)
    median_submission, worst_submission = figures(after_submission)
    median_free, worst_free = figures(free)
    return {"samples": len(records), "median_ms": median, "max_ms": worst,
            "claimed_before_submit_returned": sum(1 for v in after_return if v <= 0),
            "from_submission_median_ms": median_submission, "from_submission_max_ms": worst_submission,
            "with_both_slots_busy": len(records) - len(free),
            "item_run_median_ms": round(1000 * statistics.median(runs), 1) if runs else None,
            "item_run_max_ms": round(1000 * max(runs), 1) if runs else None, "slot_free_median_ms": median_free, "slot_free_max_ms": worst_free,
            "raw": {"columns": ["after_return_ms", "after_submission_ms", "busy_slots", "run_ms"],
                    "rows": [[round(1000 * r["after_return"], 1), round(1000 * r["after_submission"], 1), r["busy_slots"],
                              None if r["run"] is None else round(1000 * r["run"], 1)] for r in records]}}


def older_than():
    """`--older-than 14d`, as docs/queue.md writes it; 336h (the same) when this build refuses it,
    with the refusal, which is reported."""
    probe = f"{WORK}/probe"
    os.makedirs(f"{probe}/pending", exist_ok=True)
    tried = subprocess.run([BIN, "prune", probe, "--older-than", "14d"], capture_output=True, text=True)
    if tried.returncode == 0:
        return "14d", None
    return "336h", f"`prune --older-than 14d` exited {tried.returncode}: {tried.stderr.strip().splitlines()[0]}; used 336h"


def prune_with_claims(backend, duration):
    job = backend.job("quick", QUICK)
    LOAD.phase = f"{backend.kind}: making {PRUNED:,} finished items"
    made_s = finished_items(backend)
    watch = FolderWatch(backend.queue) if backend.kind == "folder" else None
    if watch:
        watch.start()
    worker = backend.start_worker("--workers", "2")
    try:
        # the worker is up and has claimed once (a first claim reads the folder once)
        first = backend.submit(job)[0]
        deadline = time.time() + 30
        while (first not in watch.claimed) if watch else (not backend.claim_times(ids=[first])):
            assert time.time() < deadline, "the worker claimed nothing in 30 s"
            time.sleep(0.05)
        time.sleep(1)

        def submit_every(until):
            submitted, tick = [], time.perf_counter()
            while not until(len(submitted)):
                key = backend.submit(job)[0]
                submitted.append((key, time.time()))
                tick += SUBMIT_EVERY
                time.sleep(max(0.0, tick - time.perf_counter()))
            return submitted

        LOAD.phase = f"{backend.kind}: baseline"
        baseline = submit_every(lambda count: count >= BASELINE_SUBMITS)
        time.sleep(1)
        LOAD.phase = f"{backend.kind}: prune"
        ended = {}
        started = time.perf_counter()
        worker_cpu = cpu_seconds(worker.pid)
        children_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        prune = subprocess.Popen([BIN, "prune", backend.queue, "--older-than", duration], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)

        def reap():
            # wait4: the prune's own CPU time too
            _, status, usage = os.wait4(prune.pid, 0)
            ended["at"] = time.perf_counter()
            prune.returncode = os.waitstatus_to_exitcode(status)
            ended["usage"] = usage

        waiter = threading.Thread(target=reap, daemon=True)
        waiter.start()
        during = submit_every(lambda count: "at" in ended or time.perf_counter() - started > min(LATENCY_WINDOW, PRUNE_TIMEOUT))
        waiter.join(timeout=max(0.0, started + PRUNE_TIMEOUT - time.perf_counter()))
        killed = waiter.is_alive()
        if killed:
            prune.kill()
            waiter.join()
        prune_s = ended["at"] - started
        output, errors = prune.stdout.read(), prune.stderr.read()
        assert killed or prune.returncode == 0, f"prune exited {prune.returncode}: {output}{errors}"
        words = output.split()
        count = int(words[1].replace(",", "")) if len(words) > 1 and words[0] == "pruned" else -1
        usage, after = ended["usage"], resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = {"prune_user_s": round(usage.ru_utime, 2), "prune_sys_s": round(usage.ru_stime, 2),
               "prune_waits": usage.ru_nvcsw,
               # the submits (reaped meanwhile), less the prune, which wait4 counted too
               "submits_s": round(after.ru_utime + after.ru_stime - children_cpu.ru_utime - children_cpu.ru_stime
                                  - usage.ru_utime - usage.ru_stime, 2),
               "worker_and_its_runs_s": round(cpu_seconds(worker.pid) - worker_cpu, 2)}
        base_records, base_missing = latencies(backend, watch, baseline)
        during_records, during_missing = latencies(backend, watch, during)
    finally:
        stop_workers([worker])
        if watch:
            watch.stop()
    if backend.kind == "folder":
        left = len([n for n in os.listdir(f"{backend.queue}/done") if n.startswith("20261101T") and n.endswith(".yaml")])
    else:
        left = int(psql(backend.queue, "SELECT count(*) FROM _batchrun_queue WHERE ended_at < now() - interval '14 days'"))
    return {"items": PRUNED, "older_than": duration, "killed_after_s": PRUNE_TIMEOUT if killed else None, "cpu_during_prune": cpu, "made_s": round(made_s, 2), "prune_s": round(prune_s, 3), "printed": output.strip(),
            "printed_count": count, "old_items_left": left, "target_s": 10.0,
            "claim_latency_baseline": summarize(base_records), "claim_latency_during_prune": summarize(during_records),
            "unclaimed": {"baseline": base_missing, "during_prune": during_missing}, "claim_latency_target_ms": 50}


def page_queue(backend):
    """The live page's queue: one done and PAGE_FAILED failed items run by a worker, the done one
    copied to PAGE_DONE, PAGE_PENDING pending items, PAGE_AUDIT audit lines. The seconds it took."""
    started = time.perf_counter()
    quick, broken = backend.job("quick", QUICK), backend.job("broken", BROKEN)
    with open(f"{backend.folder}/broken.csv", "w") as out:
        out.write("id\nabc\n")
    backend.submit(quick)
    backend.submit(broken, PAGE_FAILED)
    # ends 1 when items failed: its exit status is not checked, the states are
    subprocess.run([BIN, "worker", backend.queue, "--once", "--quiet", *backend.options], stdout=subprocess.DEVNULL,
                   stderr=open(f"{backend.folder}/workers.err", "a"))
    now = time.time()
    # the copies ended over the last day, evenly; the audit lines a minute apart
    spacing = 86400 / PAGE_DONE
    ends = [now - 86400 + spacing * n for n in range(1, PAGE_DONE)]
    actions = ["retry", "cancel", "pause", "resume", "sign-in"]
    if backend.kind == "folder":
        done = f"{backend.queue}/done"
        [real] = [n for n in os.listdir(done) if n.endswith(".yaml")]
        contents = [(suffix, open(f"{done}/{real}{suffix}", "rb").read()) for suffix in ("", ".json", ".log")]
        for n, ended in enumerate(ends, start=1):
            # distinct names of the shape submit gives (20261128T153128772-0012-quick.yaml), of when it ended
            name = f"{done}/{time.strftime('%Y%m%dT%H%M%S', time.gmtime(ended))}{n % 1000:03d}-{n % 10_000:04d}-quick.yaml"
            for suffix, content in contents:
                descriptor = os.open(name + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.write(descriptor, content)
                os.close(descriptor)
                os.utime(name + suffix, (ended, ended))
        names = sorted(n for n in os.listdir(done) if n.endswith(".yaml"))
        with open(f"{backend.queue}/audit.log", "a") as out:   # as QueueFolder.appendAudit writes them
            for n in range(1, PAGE_AUDIT + 1):
                at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now - 86400 + 60 * n)) + ".000Z"
                line = {"action": actions[n % 5], "at": at, "who": ("alice", "bob")[n % 2]}
                if n % 5 < 2:
                    line["item"] = names[n % len(names)]
                out.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")
    else:
        copied = ("name, job_text, params, directory, state, token, attempts, status, report, log, error, priority, run_at, "
                  "max_attempts, backoff, failures")
        psql(backend.queue, f"""
            INSERT INTO _batchrun_queue ({copied}, submitted_at, started_at, ended_at)
            SELECT {copied}, now() - interval '1 day' + g * interval '{spacing} seconds' - interval '1 second',
                   now() - interval '1 day' + g * interval '{spacing} seconds' - interval '0.5 second',
                   now() - interval '1 day' + g * interval '{spacing} seconds'
            FROM _batchrun_queue, generate_series(1, {PAGE_DONE - 1}) AS g
            WHERE id = (SELECT min(id) FROM _batchrun_queue WHERE state = 'done');
            INSERT INTO _batchrun_audit (at, who, action, item)
            SELECT to_char((now() - interval '1 day' + g * interval '1 minute') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   (ARRAY['alice', 'bob'])[1 + g % 2], (ARRAY['{"', '".join(actions)}'])[1 + g % 5],
                   CASE WHEN g % 5 < 2 THEN (1 + g % {PAGE_DONE})::text END
            FROM generate_series(1, {PAGE_AUDIT}) AS g;
            ANALYZE _batchrun_queue; ANALYZE _batchrun_audit""")
    backend.submit(quick, PAGE_PENDING)
    return time.perf_counter() - started


def page_get(port, path="/", cookie=None):
    """GET over a new connection: seconds to the last byte, and the page."""
    headers = {"Connection": "close", **({"Cookie": cookie} if cookie else {})}
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    body = response.read()
    seconds = time.perf_counter() - started
    connection.close()
    assert response.status == 200, f"GET {path}: {response.status} {body[:300]!r}"
    return seconds, body


def as_of_of(page):
    """The page's "as of" (its snapshot's time, to the second)."""
    match = re.search(rb'id="as-of">([^<]*)<', page)
    assert match, page[:2000]
    return match.group(1)


def sign_in(port):
    """POST /sign-in as the page's form does; the session's cookie (`batchrun_session=...`)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", "/sign-in", body=f"token={TOKEN}",
                       headers={"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/x-www-form-urlencoded",
                                "Connection": "close"})
    response = connection.getresponse()
    body = response.read()
    cookies = [c.split(";", 1)[0] for c in response.msg.get_all("Set-Cookie") or [] if c.startswith("batchrun_session=")]
    connection.close()
    assert response.status == 303 and cookies, f"sign-in: {response.status} {body[:300]!r}"
    return cookies[0]


def page_loads(backend, signed_in):
    """`serve` started; the first GET / (cold), and PAGE_LOADS more, each PAGE_SPACING after the previous one came."""
    extra = []
    if signed_in:
        tokens = f"{backend.folder}/tokens"
        with open(tokens, "w") as out:
            out.write(f"alice {TOKEN}\n")
        os.chmod(tokens, 0o600)
        extra = ["--actions", "--token-file", tokens]
    serve = subprocess.Popen([BIN, "serve", backend.queue, "--listen", "127.0.0.1:0", *extra], stdout=subprocess.PIPE,
                             stderr=open(f"{backend.folder}/serve.err", "a"), text=True, start_new_session=True)
    GROUPS.add(serve.pid)
    try:
        said = serve.stdout.readline()   # serving Q at http://127.0.0.1:PORT/ ...: listening
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", said)
        assert match, f"serve said {said!r}"
        port = int(match.group(1))
        cookie = sign_in(port) if signed_in else None
        cpu = cpu_seconds(serve.pid)
        first, page = page_get(port, cookie=cookie)
        first_cpu = cpu_seconds(serve.pid) - cpu
        if signed_in:
            assert b"Signed in as" in page, page[:2000]
        counts = f"{PAGE_DONE} done".encode(), f"{PAGE_FAILED} failed".encode(), f"Audit ({PAGE_AUDIT})".encode()
        assert all(text in page for text in counts), page[:3000]
        # PAGE_SPACING after the previous page came (a PostgreSQL snapshot's time is taken once its
        # rows are read: spaced from the requests, a slow load made the next one the cached page);
        # a page whose "as of" (to the second) is the previous one's came from the cache
        loads, cpus, cached, as_of = [], [], 0, as_of_of(page)
        for _ in range(PAGE_LOADS):
            time.sleep(PAGE_SPACING)
            cpu = cpu_seconds(serve.pid)
            seconds, later = page_get(port, cookie=cookie)
            cpus.append(cpu_seconds(serve.pid) - cpu)
            loads.append(seconds)
            cached += as_of_of(later) == as_of
            as_of = as_of_of(later)
        rss_mb = int(next(line for line in open(f"/proc/{serve.pid}/status") if line.startswith("VmHWM")).split()[1]) / 1024
    finally:
        serve.send_signal(signal.SIGINT)
        try:
            serve.wait(timeout=10)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()
        GROUPS.discard(serve.pid)
    return {"first_ms": round(1000 * first, 1), "first_cpu_ms": round(1000 * first_cpu),
            "median_ms": round(1000 * statistics.median(loads), 1), "max_ms": round(1000 * max(loads), 1),
            "cpu_median_ms": round(1000 * statistics.median(cpus)), "cpu_max_ms": round(1000 * max(cpus)),
            "loads_ms": [round(1000 * s, 1) for s in loads], "page_kb": round(len(page) / 1024, 1),
            "later_page_kb": round(len(later) / 1024, 1), "cached_loads": cached, "serve_peak_mb": round(rss_mb, 1),
            "first_passed": first * 1000 < PAGE_TARGET_MS, "later_passed": max(loads) * 1000 < PAGE_TARGET_MS}


def page_first_load(backend):
    LOAD.phase = f"{backend.kind}: making the page's queue"
    made_s = page_queue(backend)
    result = {"done": PAGE_DONE, "failed": PAGE_FAILED, "pending": PAGE_PENDING, "audit_lines": PAGE_AUDIT,
              "made_s": round(made_s, 2), "target_ms": PAGE_TARGET_MS}
    for signed_in, key in ((False, "read_only"), (True, "signed_in")):
        LOAD.phase = f"{backend.kind}: page, {key.replace('_', ' ')}"
        result[key] = page_loads(backend, signed_in)
    return result


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    version = batchrun("--version").splitlines()[0]
    print(f"batchrun: {BIN} ({version}; {BUILD_NOTE})", flush=True)
    LOAD.start()
    results = {}
    server = subprocess.run(["bash", SERVER, "start", "--owner", str(os.getpid())], check=True, capture_output=True,
                            text=True).stdout.strip().splitlines()[-1]
    duration, refusal = None, None
    try:
        for kind in KINDS if "pause" in PARTS else []:
            LOAD.phase = f"{kind}: pause"
            results.setdefault(kind, {})["pause"] = pause_to_last_claim(Backend(kind, "pause", server))
            print(f"  {kind}: pause done", flush=True)
        if "prune" in PARTS:
            duration, refusal = older_than()
            if refusal:
                print(f"  BUG: {refusal}", flush=True)
        for kind in KINDS if "prune" in PARTS else []:
            backend = Backend(kind, "prune", server)
            results.setdefault(kind, {})["prune"] = prune_with_claims(backend, duration)
            print(f"  {kind}: prune done", flush=True)
            if kind == "folder":
                shutil.rmtree(backend.folder, ignore_errors=True)
        for kind in KINDS if "page" in PARTS else []:
            backend = Backend(kind, "page", server)
            results.setdefault(kind, {})["page"] = page_first_load(backend)
            print(f"  {kind}: page done", flush=True)
            if kind == "folder":
                shutil.rmtree(backend.folder, ignore_errors=True)
    finally:
        subprocess.run(["bash", SERVER, "stop", server], check=False)
        LOAD.done.set()
    phases = sorted({sample[0] for sample in LOAD.samples}, key=[sample[0] for sample in LOAD.samples].index)
    load = {phase: LOAD.of(phase) for phase in phases}
    summary = {"benchmark": "operating", "binary": BIN, "version": version, "build": BUILD_NOTE, "trials": TRIALS,
               "cores": os.cpu_count(), "load": load, "older_than_refused": refusal, "results": results}
    os.makedirs(f"{ROOT}/.build-bench", exist_ok=True)
    json.dump(summary, open(f"{ROOT}/.build-bench/operating.json", "w"), indent=2)

    print(f"Operating a queue (issue 48), {os.cpu_count()} cores")
    for kind, name in (("folder", "queue folder"), ("postgres", "PostgreSQL")):
        if kind not in results:
            continue
        print(f"  {name}")
        pause, prune, page = (results[kind].get(part) for part in ("pause", "prune", "page"))
        if pause:
            met = "met" if pause["max_s"] <= 1 else "NOT met"
            after = sum(t["claims_after_return"] for t in pause["trials"])
            issued = [t["last_claim_after_pause_issued_s"] for t in pause["trials"] if t["last_claim_after_pause_issued_s"] is not None]
            print(f"    pause to the last claim: median {1000 * pause['median_s']:6.1f} ms, worst {1000 * pause['max_s']:6.1f} ms over "
                  f"{TRIALS} pauses of 3 busy workers, ~{PENDING} pending (target at most 1,000 ms: {met}); "
                  f"{after} claims after pause returned, in all; "
                  f"from the command's start: worst {1000 * max(issued, default=0):.1f} ms (the command took "
                  f"{1000 * max(t['pause_command_s'] for t in pause['trials']):.0f} ms at most)")
        if prune:
            base, during = prune["claim_latency_baseline"], prune["claim_latency_during_prune"]
            ok = "met" if prune["prune_s"] <= 10 and prune["printed_count"] == PRUNED and prune["old_items_left"] == 0 else "NOT met"
            if prune["killed_after_s"]:
                ok += f"; it had not ended after {prune['killed_after_s']:g} s and was killed"
            cpu = prune["cpu_during_prune"]
            print(f"    prune --older-than {duration} of {PRUNED:,} done items: {prune['prune_s']:6.2f} s, printed {prune['printed_count']:,}, "
                  f"{prune['old_items_left']} left (target at most 10 s, all of them: {ok}); its CPU {cpu['prune_user_s']:.2f} s user "
                  f"{cpu['prune_sys_s']:.2f} s system ({cpu['prune_waits']:,} waits); meanwhile the submits used {cpu['submits_s']:.2f} s, "
                  f"the worker and its runs {cpu['worker_and_its_runs_s']:.2f} s")
            lat = "met" if during["max_ms"] is not None and during["max_ms"] <= 50 else "NOT met"
            print(f"    claim latency, submit returned -> claimed (0 when claimed before): during the prune median {during['median_ms']} ms, "
                  f"worst {during['max_ms']} ms ({during['samples']} items, {during['claimed_before_submit_returned']} claimed before "
                  f"submit returned; target at most 50 ms: {lat})")
            print(f"                   without a prune median {base['median_ms']} ms, worst {base['max_ms']} ms ({base['samples']} items, "
                  f"{base['claimed_before_submit_returned']} claimed before submit returned)")
            print(f"    claim latency, submitted -> claimed: during the prune median {during['from_submission_median_ms']} ms, worst "
                  f"{during['from_submission_max_ms']} ms; without median {base['from_submission_median_ms']} ms, worst "
                  f"{base['from_submission_max_ms']} ms")
            print(f"    items submitted while both of the worker's slots were busy: {during['with_both_slots_busy']} during the prune "
                  f"(with a slot free: worst {during['slot_free_max_ms']} ms), {base['with_both_slots_busy']} without "
                  f"(worst {base['slot_free_max_ms']} ms); an item ran (claim to end) median {during['item_run_median_ms']} ms, "
                  f"worst {during['item_run_max_ms']} ms during the prune, {base['item_run_median_ms']} / {base['item_run_max_ms']} ms without")
        if page:
            print(f"    the live page's first load (serve), {page['done']:,} done, {page['failed']} failed, {page['pending']} pending, "
                  f"{page['audit_lines']:,} audit lines (made in {page['made_s']:.1f} s); target under {PAGE_TARGET_MS} ms:")
            for key, who in (("read_only", "read-only"), ("signed_in", "signed in (--actions)")):
                p = page[key]
                verdict = lambda passed: "PASS" if passed else "FAIL"
                print(f"      {who:22} first GET / {p['first_ms']:6.1f} ms (serve's CPU {p['first_cpu_ms']} ms): "
                      f"{verdict(p['first_passed'])}; next {PAGE_LOADS}, {PAGE_SPACING} s apart: median {p['median_ms']:6.1f} ms, "
                      f"worst {p['max_ms']:6.1f} ms (CPU median {p['cpu_median_ms']} ms, worst {p['cpu_max_ms']} ms; "
                      f"{PAGE_LOADS - p['cached_loads']} new snapshots): "
                      f"{verdict(p['later_passed'])}; page {p['page_kb']:.1f} KB; serve's peak {p['serve_peak_mb']:.1f} MB")
    if refusal:
        print(f"  BUG: {refusal}")
    print("  load by phase: 1-minute load average mean (max); CPU and I/O pressure, % of time some task waited, mean (max)")
    for phase, figures in load.items():
        if figures:
            print(f"    {phase:42}" + "   ".join(f"{name.split('_')[0]} {v['mean']:.2f} ({v['max']:.2f})" for name, v in figures.items()))


if __name__ == "__main__":
    main()
