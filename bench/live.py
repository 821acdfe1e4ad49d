#!/usr/bin/env python3
"""Seeing it live (issue 35). Four figures:
  1. metrics' cost: the 1,000,000-row flight import (bench/import/flights.yaml) and the
     1,000,000-row context update (bench/update_context.yaml), each without and with
     `--metrics-file` (metrics recorded into swift-prometheus), alternated, medians of RUNS of
     the wall time and of the run's CPU time (user + system, which a loaded machine disturbs
     less) (target: at most 2% more); each metrics file must hold the run's batches;
  2. `batchrun serve`'s first page load on a queue folder of 10,000 finished items and 100
     running ones: the time of the first GET / after the server starts (a cold snapshot),
     median of 5 starts, with the CPU time `serve` spent on it (/proc/PID/stat, 10 ms ticks)
     (target: under 200 ms);
  3. `serve`'s peak memory (VmHWM) after that page, 20 more loads and 5 s of server-sent
     events (target: under 30 MB), and what its resident memory is made of then
     (/proc/PID/smaps_rollup: file-backed, anonymous, PSS, private dirty), the same for a
     queue of one item.
  4. the metrics' cost in instructions executed in user space, which the machine's load does not
     change as it changes times: the same two runs without and with `--metrics-file`,
     alternated, INSTRUCTION_RUNS (default 5) of each, medians and their ratio (target: at most
     2% more). `perf stat -e instructions:u,cycles:u` where the processor's counters can be read;
     else (a virtual machine without them, as this one) valgrind's cachegrind counts the
     instructions (`I refs`; of the binary stripped of its DWARF 5 debug information, which
     valgrind 3.19 cannot read; its threads run one at a time, far slower on a loaded
     machine), on INSTRUCTION_ROWS (default 20000,60000) rows, INSTRUCTION_JOBS (default 4)
     runs side by side, and a line through the two sizes takes the cost to ROWS.
     ONLY_INSTRUCTIONS=1 runs this part alone; SKIP_INSTRUCTIONS=1 leaves it out.
Writes .build-bench/live.json.
    bench/live.py [ROWS]        (a release build; BIN=path overrides, e.g. .build/debug/batchrun)
"""
import json, os, re, shutil, socket, statistics, subprocess, sys, time

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
RUNS = int(os.environ.get("RUNS", "5"))
BIN = os.path.abspath(os.environ.get("BIN", ".build/release/batchrun"))
OUT = os.path.abspath(".build-bench")
ROOT = os.path.join(OUT, "live")


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)


def timed(command, prepare=None):
    """Wall seconds and CPU seconds (user + system) of one run of `command`."""
    if prepare:
        subprocess.run(prepare, shell=True, check=True)
    before = os.times()
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def percent(on, off):
    return round((statistics.median(on) / statistics.median(off) - 1) * 100, 2)


def paired_percent(on, off):
    """The median of each "on" run against the "off" run just before it: the machine's speed
    drifts by tens of percent between minutes, which the two medians alone do not cancel."""
    return round((statistics.median(a / b for a, b in zip(on, off)) - 1) * 100, 2)


def metrics_cost():
    prepare_metrics_inputs()
    prom = os.path.join(ROOT, "run.prom")
    cases = {
        "import": ([BIN, "bench/import/flights.yaml", "--quiet"],
                   f"rm -f {OUT}/import/batchrun.sqlite {OUT}/import/batchrun.sqlite-wal {OUT}/import/batchrun.sqlite-shm"),
        "context update": ([BIN, "bench/update_context.yaml", "--quiet"],
                           f"cp {OUT}/accounts.sqlite {OUT}/work.sqlite && rm -f {OUT}/work.sqlite-wal {OUT}/work.sqlite-shm"),
    }
    result = {}
    for name, (command, prepare) in cases.items():
        timed(command, prepare)   # warm-up
        off, on = [], []
        for _ in range(RUNS):   # alternated: the machine's speed moves between minutes
            off.append(timed(command, prepare))
            if os.path.exists(prom):
                os.remove(prom)
            on.append(timed(command + ["--metrics-file", prom], prepare))
            batches = [line for line in open(prom) if line.startswith("batchrun_batch_duration_seconds_count")]
            assert batches and float(batches[0].split()[-1]) > 0, f"{prom} holds no batches: metrics were not recorded"
        wall_off, wall_on = [w for w, _ in off], [w for w, _ in on]
        cpu_off, cpu_on = [c for _, c in off], [c for _, c in on]
        result[name] = {"runs": RUNS, "off_s": round(statistics.median(wall_off), 3), "on_s": round(statistics.median(wall_on), 3),
                        "cost_percent": percent(wall_on, wall_off),
                        "cpu_off_s": round(statistics.median(cpu_off), 3), "cpu_on_s": round(statistics.median(cpu_on), 3),
                        "cpu_cost_percent": percent(cpu_on, cpu_off),
                        "paired_cost_percent": paired_percent(wall_on, wall_off), "paired_cpu_cost_percent": paired_percent(cpu_on, cpu_off),
                        "wall_off_all_s": [round(w, 3) for w in wall_off], "wall_on_all_s": [round(w, 3) for w in wall_on],
                        "cpu_off_all_s": [round(c, 3) for c in cpu_off], "cpu_on_all_s": [round(c, 3) for c in cpu_on]}
        r = result[name]
        print(f"{name} (medians of {RUNS}): metrics off {r['off_s']} s, on {r['on_s']} s: {r['cost_percent']:+.2f}%; "
              f"CPU off {r['cpu_off_s']} s, on {r['cpu_on_s']} s: {r['cpu_cost_percent']:+.2f}%; "
              f"run by run (median of on/off pairs): wall {r['paired_cost_percent']:+.2f}%, CPU {r['paired_cpu_cost_percent']:+.2f}% (target at most 2%)")
    return result


def prepare_metrics_inputs():
    """The flight feed of ROWS rows and the accounts store the two runs read."""
    flights = os.path.join(OUT, "import", f"flights-{ROWS}.csv")
    if not os.path.exists(flights):
        os.makedirs(os.path.dirname(flights), exist_ok=True)
        subprocess.run([sys.executable, "bench/import/make_flights.py", str(ROWS), flights], check=True)
    link = os.path.join(OUT, "import", "flights.csv")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.basename(flights), link)
    subprocess.run([sys.executable, "bench/make_accounts.py", str(ROWS), os.path.join(OUT, "accounts.sqlite")], check=True)


def hardware_counters():
    """True when `perf stat` can count this process's instructions (not in most virtual machines)."""
    try:
        probe = subprocess.run(["perf", "stat", "-x,", "-e", "instructions:u", "true"], capture_output=True, text=True)
    except FileNotFoundError:
        return False
    return probe.returncode == 0 and probe.stderr.split(",")[0].strip().isdigit()


def counted(command, prepare, counter):
    """Instructions executed in user space by one run of `command` (and cycles, by perf only)."""
    subprocess.run(prepare, shell=True, check=True)
    if counter == "perf":
        run = subprocess.run(["perf", "stat", "-x,", "-e", "instructions:u,cycles:u", "--"] + command,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
        values = {line.split(",")[2]: int(line.split(",")[0]) for line in run.stderr.splitlines() if line.split(",")[0].isdigit()}
        return values["instructions:u"], values.get("cycles:u")
    run = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--branch-sim=no", "--cachegrind-out-file=/dev/null"] + command,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    return int(re.search(r"I\s+refs:\s+([\d,]+)", run.stderr).group(1).replace(",", "")), None


def instruction_jobs(rows, tag):
    """The two jobs of the cost runs on a feed and a store of `rows` rows, in .build-bench/live,
    with stores of their own (`tag`: runs may go side by side)."""
    flights = os.path.join(OUT, "import", f"flights-{rows}.csv")
    if not os.path.exists(flights):
        os.makedirs(os.path.dirname(flights), exist_ok=True)
        subprocess.run([sys.executable, "bench/import/make_flights.py", str(rows), flights], check=True)
    accounts = os.path.join(OUT, f"accounts-{rows}.sqlite")
    if not os.path.exists(accounts):
        subprocess.run([sys.executable, "bench/make_accounts.py", str(rows), accounts], check=True)
    store, work = os.path.join(ROOT, f"import-{tag}.sqlite"), os.path.join(ROOT, f"work-{tag}.sqlite")
    import_job, update_job = os.path.join(ROOT, f"import-{tag}.yaml"), os.path.join(ROOT, f"update-{tag}.yaml")
    text = open("bench/import/flights.yaml").read()
    open(import_job, "w").write(text.replace("../../.build-bench/import/flights.csv", flights).replace("../../.build-bench/import/batchrun.sqlite", store))
    open(update_job, "w").write(open("bench/update_context.yaml").read().replace("../.build-bench/work.sqlite", work))
    return {"import": (import_job, f"rm -f {store} {store}-wal {store}-shm"),
            "context update": (update_job, f"cp {accounts} {work} && rm -f {work}-wal {work}-shm")}


def metrics_instructions():
    """Instructions in user space with metrics off and on (see the module's doc, figure 4)."""
    import threading   # not concurrent.futures: it imports `queue`, which bench/queue.py shadows here
    runs = int(os.environ.get("INSTRUCTION_RUNS", "5"))
    counter = "perf" if hardware_counters() else "cachegrind"
    # cachegrind runs 30 to 100 times slower, and far slower still on a loaded machine (it runs
    # the threads one at a time and waits for a core at each switch): fewer rows, the same
    # batches' sizes, at two sizes so that the cost's fixed part and its part per row can be
    # told apart and taken to ROWS (instruction counts do not depend on the load, so these runs
    # may go side by side).
    sizes = [int(n) for n in os.environ.get("INSTRUCTION_ROWS", str(ROWS) if counter == "perf" else "20000,60000").split(",")]
    parallel = int(os.environ.get("INSTRUCTION_JOBS", "1" if counter == "perf" else "4"))
    binary = BIN
    if counter == "cachegrind":
        binary = os.path.join(OUT, "batchrun-nodebug")
        subprocess.run(["objcopy", "--strip-debug", BIN, binary], check=True)
    tasks = []
    for rows in sizes:
        for run in range(runs):
            for metrics in (False, True):
                tag = f"{rows}-{run}-{'on' if metrics else 'off'}"
                for name, (job, prepare) in instruction_jobs(rows, tag).items():
                    prom = os.path.join(ROOT, f"run-{name.replace(' ', '-')}-{tag}.prom")
                    tasks.append((rows, name, metrics, [binary, job, "--quiet"] + (["--metrics-file", prom] if metrics else []), prepare, prom))

    def one(task):
        rows, name, metrics, command, prepare, prom = task
        value = counted(command, prepare, counter)
        if metrics:
            assert any(line.startswith("batchrun_batch_duration_seconds_count") for line in open(prom)), f"{prom}: no batches recorded"
        return value

    values = [None] * len(tasks)
    slots = threading.Semaphore(parallel)

    def slot(index):
        try:
            values[index] = one(tasks[index])
        finally:
            slots.release()

    threads = []
    for index in range(len(tasks)):
        slots.acquire()
        threads.append(threading.Thread(target=slot, args=(index,)))
        threads[-1].start()
    for thread in threads:
        thread.join()
    assert all(value is not None for value in values), "a counted run failed"
    result = {"counter": counter, "runs": runs, "rows": sizes}
    for name in ("import", "context update"):
        result[name] = {}
        for rows in sizes:
            pick = lambda metrics: [v for t, v in zip(tasks, values) if t[0] == rows and t[1] == name and t[2] == metrics]
            off, on = pick(False), pick(True)
            instructions_off, instructions_on = [i for i, _ in off], [i for i, _ in on]
            r = {"instructions_off": statistics.median(instructions_off), "instructions_on": statistics.median(instructions_on),
                 "instructions_off_all": instructions_off, "instructions_on_all": instructions_on}
            r["cost_percent"] = round((r["instructions_on"] / r["instructions_off"] - 1) * 100, 3)
            r["spread_off_percent"] = round((max(instructions_off) / min(instructions_off) - 1) * 100, 3)
            r["spread_on_percent"] = round((max(instructions_on) / min(instructions_on) - 1) * 100, 3)
            cycles = ""
            if counter == "perf":
                r["cycles_off"] = statistics.median(c for _, c in off)
                r["cycles_on"] = statistics.median(c for _, c in on)
                cycles = f"; cycles {r['cycles_off']:,} / {r['cycles_on']:,} ({(r['cycles_on'] / r['cycles_off'] - 1) * 100:+.2f}%)"
            result[name][rows] = r
            print(f"{name}, {rows:,} rows, instructions in user space ({counter}, medians of {runs}): metrics off {r['instructions_off']:,}, "
                  f"on {r['instructions_on']:,}: {r['cost_percent']:+.3f}% (target at most 2%; runs spread {r['spread_off_percent']}% off, "
                  f"{r['spread_on_percent']}% on){cycles}")
        if len(sizes) >= 2 and ROWS not in sizes:   # a line through the two smallest sizes, taken to ROWS
            (n1, a), (n2, b) = sorted(result[name].items())[:2]
            per_row_off = (b["instructions_off"] - a["instructions_off"]) / (n2 - n1)
            per_row_cost = ((b["instructions_on"] - b["instructions_off"]) - (a["instructions_on"] - a["instructions_off"])) / (n2 - n1)
            off_at = a["instructions_off"] + per_row_off * (ROWS - n1)
            cost_at = (a["instructions_on"] - a["instructions_off"]) + per_row_cost * (ROWS - n1)
            result[name]["at_rows"] = {"rows": ROWS, "instructions_off": round(off_at), "cost_instructions": round(cost_at),
                                       "cost_percent": round(cost_at / off_at * 100, 3)}
            print(f"{name}, taken to {ROWS:,} rows (a line through {n1:,} and {n2:,}): off {off_at:,.0f} instructions, "
                  f"metrics {cost_at:+,.0f}: {cost_at / off_at * 100:+.3f}% (target at most 2%)")
    return result


def make_queue(finished=10_000, running=100, name="q"):
    queue = os.path.join(ROOT, name)
    job = os.path.join(ROOT, name + ".yaml")   # a store of its own: the item inserts the same row
    with open(job, "w") as f:
        f.write("version: 1\nstore: %s/%s.sqlite\nentities:\n  Tick: { columns: { id: integer primary key } }\n"
                "jobs:\n  tick:\n    steps:\n      - insert: { entity: Tick, rows: [{ id: 1 }] }\n" % (ROOT, name))
    subprocess.run([BIN, "submit", queue, job], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([BIN, "worker", queue, "--once", "-q"], check=True)
    done = os.path.join(queue, "done")
    [first] = [n for n in os.listdir(done) if n.endswith(".yaml")]
    text, report, log = (open(os.path.join(done, first + suffix)).read() for suffix in ("", ".json", ".log"))
    for number in range(2, finished + 1):
        name = "20261126T%09d-0001-job.yaml" % number
        for suffix, content in (("", text), (".json", report), (".log", log)):
            with open(os.path.join(done, name + suffix), "w") as f:
                f.write(content)
    for number in range(running):
        name = "20261126T%09d-0002-job.yaml" % number
        with open(os.path.join(queue, "running", name), "w") as f:
            f.write(text)
        with open(os.path.join(queue, "running", name + ".progress"), "w") as f:   # as each run publishes it
            json.dump({"pid": 10000 + number, "host": "bench", "jobs": ["tick"], "rows": 1000 * number,
                       "fraction": number / running, "started_at": "2026-11-26T14:00:00Z"}, f)
    return queue


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path="/"):
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return time.perf_counter() - start, data


def start_serve(queue, port):
    process = subprocess.Popen([BIN, "serve", queue, "--listen", f"127.0.0.1:{port}"], stdout=subprocess.PIPE)
    process.stdout.readline()   # `serving ... at ...`: listening
    return process


def cpu_ms(pid):
    """CPU time (user + system) of a process so far, in ms (10 ms ticks)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 // os.sysconf("SC_CLK_TCK")


def memory(pid):
    """What a process's resident memory is made of (KB -> MB as VmHWM is divided)."""
    rollup = {line.split(":")[0]: int(line.split()[1]) for line in open(f"/proc/{pid}/smaps_rollup") if line.split()[-1:] == ["kB"]}
    status = {line.split(":")[0]: int(line.split()[1]) for line in open(f"/proc/{pid}/status") if line.rstrip().endswith("kB")}
    mb = lambda kb: round(kb / 1024, 1)
    return {"rss_mb": mb(status["VmRSS"]), "peak_mb": mb(status["VmHWM"]), "file_mb": mb(status["RssFile"]),
            "anon_mb": mb(status["RssAnon"]), "pss_mb": mb(rollup["Pss"]), "private_dirty_mb": mb(rollup["Private_Dirty"]),
            "private_clean_mb": mb(rollup["Private_Clean"]), "shared_clean_mb": mb(rollup["Shared_Clean"])}


def described(m):
    return (f"peak {m['peak_mb']} MB (now {m['rss_mb']}: file-backed {m['file_mb']}, anonymous {m['anon_mb']}; "
            f"PSS {m['pss_mb']}, private dirty {m['private_dirty_mb']}, shared clean {m['shared_clean_mb']})")


def watched(queue):
    """`serve` on `queue` after 21 loads and 5 s of server-sent events: its memory."""
    port = free_port()
    serve = start_serve(queue, port)
    for _ in range(21):
        get(port)
        time.sleep(0.05)
    with socket.create_connection(("127.0.0.1", port)) as s:   # 5 s of server-sent events
        s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.settimeout(0.5)
        until = time.time() + 5
        while time.time() < until:
            try:
                s.recv(65536)
            except socket.timeout:
                pass
    result = memory(serve.pid)
    serve.terminate()
    serve.wait()
    return result


def live_page():
    queue = make_queue()
    firsts, cpus = [], []
    for _ in range(5):
        port = free_port()
        serve = start_serve(queue, port)
        before = cpu_ms(serve.pid)
        seconds, page = get(port)
        cpus.append(cpu_ms(serve.pid) - before)
        firsts.append(seconds)
        serve.terminate()
        serve.wait()
    assert b"running (100)" in page and b"10000 done" in page, page[:2000]
    loaded = watched(queue)
    one = watched(make_queue(finished=1, running=0, name="small"))
    result = {"first_load_ms": round(statistics.median(firsts) * 1000, 1), "first_loads_ms": [round(s * 1000, 1) for s in firsts],
              "first_load_cpu_ms": statistics.median(cpus), "first_loads_cpu_ms": cpus, "load_average": os.getloadavg()[0],
              "page_bytes": len(page), "serve_peak_mb": loaded["peak_mb"], "memory_10000": loaded, "memory_one_item": one}
    print(f"serve, 10,000 finished + 100 running: first load {result['first_load_ms']} ms (median of 5; CPU "
          f"{result['first_load_cpu_ms']} ms; load average {result['load_average']:.1f}), page {len(page):,} bytes")
    print(f"  memory with 10,000 items: {described(loaded)}")
    print(f"  memory with one item: {described(one)}")
    return result


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    fresh(ROOT)
    summary = {"benchmark": "live", "binary": BIN}
    if os.environ.get("ONLY_INSTRUCTIONS") != "1":
        summary["serve"] = live_page()
        if os.environ.get("SKIP_METRICS_COST") != "1":
            summary["metrics_cost"] = metrics_cost()
    if os.environ.get("SKIP_INSTRUCTIONS") != "1":
        summary["metrics_instructions"] = metrics_instructions()
    json.dump(summary, open(os.path.join(OUT, "live.json"), "w"), indent=2)
