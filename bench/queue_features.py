#!/usr/bin/env python3
"""The queue as River, Oban and Sidekiq users expect it (issue 33):
  - claiming the next item among 100,000 waiting ones (mixed priorities -2..2, a tenth due
    within the hour), median and worst of 200 claims after the first (target: at most 20 ms on
    a folder, 5 ms on PostgreSQL); the first claim, which reads a folder's pending/ once, apart;
  - an idle worker's CPU over 60 s, a folder and PostgreSQL (target: at most 1%).
Against a throwaway local PostgreSQL server it starts and stops. Writes .build-bench/queue_features.json.
    bench/queue_features.py [ITEMS] [IDLE_SECONDS]      (a release build of batchrun and batchrun-bench-library)
"""
import json, os, shutil, signal, subprocess, sys, time

ITEMS = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
IDLE = float(sys.argv[2]) if len(sys.argv) > 2 else 60
ROOT = os.path.abspath(".")
BUILD = os.environ.get("BUILD", "release")   # BUILD=debug: the debug build, for a quick look
BIN = f"{ROOT}/.build/{BUILD}/batchrun"
BENCH = f"{ROOT}/.build/{BUILD}/batchrun-bench-library"
OUT = f"{ROOT}/.build-bench/queue_features"
SERVER = f"{ROOT}/Tests/TestSupport/pg-throwaway.sh"
PSQL = f"/usr/lib/postgresql/{sorted(os.listdir('/usr/lib/postgresql'), key=int)[-1]}/bin/psql"
TICKS = os.sysconf("SC_CLK_TCK")


def psql(url, sql):
    return subprocess.run([PSQL, url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
                          check=True, capture_output=True, text=True).stdout.strip()


def claim(location):
    out = subprocess.run([BENCH, "queue-claim", location, str(ITEMS)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def cpu_seconds(pid):
    """User and system time of a process and its children that ended, from /proc."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICKS


def idle_cpu(location, extra):
    worker = subprocess.Popen([BIN, "worker", location, "--quiet", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(3)   # started, its first look done
        before, started = cpu_seconds(worker.pid), time.perf_counter()
        time.sleep(IDLE)
        used, elapsed = cpu_seconds(worker.pid) - before, time.perf_counter() - started
    finally:
        worker.send_signal(signal.SIGINT)
        worker.wait()
    return 100 * used / elapsed


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    folder = claim(f"{OUT}/claim")
    server = subprocess.run(["bash", SERVER, "start", "--owner", str(os.getpid())], check=True, capture_output=True,
                            text=True).stdout.strip().splitlines()[-1]
    try:
        psql(server, "CREATE DATABASE queue_features")
        url = server.rsplit("/", 1)[0] + "/queue_features"
        subprocess.run([BIN, "queue", url], check=True, stdout=subprocess.DEVNULL)   # the table and its indexes
        psql(url, f"""
            INSERT INTO _batchrun_queue (name, job_text, directory, priority, run_at, state)
            SELECT 'tick.yaml', 'version: 1', '/tmp', (n % 5) - 2,
                   CASE WHEN n % 10 = 0 THEN clock_timestamp() + (n % 3600) * interval '1 second' ELSE clock_timestamp() END,
                   CASE WHEN n % 10 = 0 THEN 'scheduled' ELSE 'pending' END
            FROM generate_series(1, {ITEMS}) AS n;
            ANALYZE _batchrun_queue""")
        postgres = claim(url)
        idle_folder = idle_cpu(f"{OUT}/idle", [])
        psql(server, "CREATE DATABASE queue_idle")
        idle_url = server.rsplit("/", 1)[0] + "/queue_idle"
        idle_postgres = idle_cpu(idle_url, ["--trust-submitters"])
    finally:
        subprocess.run(["bash", SERVER, "stop", server], check=False)
    summary = {"benchmark": "queue_features", "items": ITEMS, "claim": {"folder": folder, "postgresql": postgres},
               "claim_target_ms": {"folder": 20, "postgresql": 5},
               "idle_cpu_percent": {"folder": round(idle_folder, 2), "postgresql": round(idle_postgres, 2), "seconds": IDLE, "target": 1}}
    os.makedirs(".build-bench", exist_ok=True)
    json.dump(summary, open(".build-bench/queue_features.json", "w"), indent=2)
    print(f"Queue features: {ITEMS:,} waiting items (priorities -2..2, a tenth due within the hour)")
    for kind, figures, target in [("folder", folder, 20), ("PostgreSQL", postgres, 5)]:
        print(f"  claim, {kind:10}  first {figures['first_claim_ms']:8.2f} ms   median {figures['claim_ms_median']:6.2f} ms"
              f"   worst {figures['claim_ms_worst']:6.2f} ms (target at most {target} ms)")
    print(f"  idle worker CPU over {IDLE:.0f} s: folder {idle_folder:.2f}%, PostgreSQL {idle_postgres:.2f}% (target at most 1%)")


if __name__ == "__main__":
    main()
