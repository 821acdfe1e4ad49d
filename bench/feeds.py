#!/usr/bin/env python3
"""Feeds from anywhere (issue 32): the same flight-delays import (bench/import/flights.yaml's
entity) from a plain CSV, its .csv.gz (gzip -6) and its .csv.zst (zstd -3), runs alternating,
medians of RUNS (default 5); and the peak resident memory (GNU time's maximum RSS, the largest
of 3 runs) of importing a 150,000-row and a 1,500,000-row .csv.gz. Printed side by side,
written to .build-bench/feeds.json. The plain CSV is also imported over HTTP on loopback
(`from: http://127.0.0.1:PORT/...`, served by Python's http.server in this script) and from
S3 (`from: s3://bench/...`, moto's server on loopback with authentication on, started by
Tests/TestSupport/moto-throwaway.sh: its virtual environment sees the system's moto).
Targets: .csv.gz at most 1.15x the plain CSV, .csv.zst at most 1.05x, HTTP over loopback at
most 1.10x, S3 (moto) at most 1.25x; peak memory of the 1,500,000-row .gz at most 1.25x the 150,000-row one and under 96 MB.
    bench/feeds.py [ROWS]     (default 1,000,000; a release build, BATCHRUN=path/to/batchrun for another;
                               MEMORY=0 skips the peak-memory runs)
"""
import functools, http.server, json, os, resource, statistics, subprocess, sys, threading, time

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
RUNS = int(os.environ.get("RUNS", "5"))
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BIN = os.environ.get("BATCHRUN", f"{ROOT}/.build/release/batchrun")
OUT = f"{ROOT}/.build-bench/feeds"
os.makedirs(OUT, exist_ok=True)


def flights(rows, name):
    path = f"{OUT}/{name}"
    if not os.path.exists(path):
        subprocess.run([sys.executable, f"{ROOT}/bench/import/make_flights.py", str(rows), path], check=True)
    return path


def compressed(path, program, level):
    suffix = ".gz" if program == "gzip" else ".zst"
    if not os.path.exists(path + suffix):
        subprocess.run([program, f"-{level}", "-q", "-k", "-f", path], check=True)
    return path + suffix


def job_file(feed, name):
    with open(f"{ROOT}/bench/import/flights.yaml") as source:
        text = source.read()
    text = text.replace("../../.build-bench/import/batchrun.sqlite", f"{OUT}/{name}.sqlite")
    text = text.replace("../../.build-bench/import/flights.csv", feed)
    path = f"{OUT}/{name}.yaml"
    with open(path, "w") as out:
        out.write(text)
    return path, f"{OUT}/{name}.sqlite"


def clean(store):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)


def timed(job, store, environment=None):
    """Wall seconds and CPU seconds (user + system) of one import."""
    clean(store)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([BIN, job, "--quiet"], check=True, stdout=subprocess.DEVNULL, env=environment)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def peak_rss_mb(job, store):
    worst = 0
    for _ in range(3):
        clean(store)
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f"{OUT}/rss.txt", BIN, job, "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        with open(f"{OUT}/rss.txt") as rss:
            worst = max(worst, int(rss.read().split()[-1]))
    return worst / 1024


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass   # batchrun closes the identity probe's connection (bytes=0-0, which http.server ignores) early


def serve(folder):
    """An HTTP server for `folder` on a free loopback port, in a thread of this script: its port."""
    server = QuietServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def moto_s3(feed):
    """moto's server on a free loopback port (authentication on; stopped by its watchdog when
    this script ends) holding `feed` as s3://bench/NAME: the feed's URL and batchrun's environment."""
    tools = f"{ROOT}/Tests/TestSupport"
    lines = subprocess.run(["bash", f"{tools}/moto-throwaway.sh", "start", "--owner", str(os.getpid())], check=True,
                           capture_output=True, text=True).stdout.split()
    folder, endpoint = lines[-2], lines[-1]
    python = subprocess.run(["bash", f"{tools}/moto-throwaway.sh", "python"], check=True, capture_output=True,
                            text=True).stdout.split()[-1]
    subprocess.run([python, f"{tools}/moto-s3.py", folder, "mb", "bench"], check=True)
    name = os.path.basename(feed)
    subprocess.run([python, f"{tools}/moto-s3.py", folder, "put", "bench", name, feed], check=True)
    with open(f"{folder}/credentials.json") as file:
        keys = json.load(file)["allowed"]
    environment = dict(os.environ, AWS_ENDPOINT_URL_S3=endpoint, AWS_ACCESS_KEY_ID=keys["access_key_id"],
                       AWS_SECRET_ACCESS_KEY=keys["secret_access_key"], AWS_REGION="us-east-1", AWS_PROFILE="",
                       AWS_SESSION_TOKEN="", AWS_SHARED_CREDENTIALS_FILE="/nonexistent", AWS_CONFIG_FILE="/nonexistent")
    return f"s3://bench/{name}", environment


plain = flights(ROWS, f"flights-{ROWS}.csv")
port = serve(OUT)
s3_feed, s3_environment = moto_s3(plain)
feeds = {"csv": plain, "csv.gz": compressed(plain, "gzip", 6), "csv.zst": compressed(plain, "zstd", 3),
         "http csv": f"http://127.0.0.1:{port}/{os.path.basename(plain)}", "s3 csv": s3_feed}
environments = {"s3 csv": s3_environment}
jobs = {kind: job_file(path, "import-" + kind.replace(".", "-").replace(" ", "-")) for kind, path in feeds.items()}
times = {kind: [] for kind in feeds}
for kind, (job, store) in jobs.items():
    timed(job, store, environments.get(kind))   # a warm-up run each: the page cache holds every feed
for _ in range(RUNS):
    for kind, (job, store) in jobs.items():
        times[kind].append(timed(job, store, environments.get(kind)))
medians = {kind: statistics.median(wall for wall, _ in values) for kind, values in times.items()}
cpu = {kind: statistics.median(used for _, used in values) for kind, values in times.items()}

MEMORY = os.environ.get("MEMORY", "1") != "0"
small = large = 0.0
if MEMORY:
    small_feed = compressed(flights(150_000, "flights-150000.csv"), "gzip", 6)
    large_feed = compressed(flights(1_500_000, "flights-1500000.csv"), "gzip", 6)
    small = peak_rss_mb(*job_file(small_feed, "memory-150k"))
    large = peak_rss_mb(*job_file(large_feed, "memory-1500k"))
for name in ("memory-150k", "memory-1500k", *("import-" + kind.replace(".", "-").replace(" ", "-") for kind in feeds)):
    clean(f"{OUT}/{name}.sqlite")

sizes = {kind: os.path.getsize(path if "://" not in path else plain) for kind, path in feeds.items()}
print(f"feeds: {ROWS:,} flight rows, medians of {RUNS} runs ({BIN})")
print(f"  {'feed':<10} {'bytes':>12} {'wall s':>8} {'vs csv':>8} {'CPU s':>8} {'vs csv':>8} {'target':>8}")
for kind, target in (("csv", None), ("csv.gz", 1.15), ("csv.zst", 1.05), ("http csv", 1.10), ("s3 csv", 1.25)):
    ratio, cpu_ratio = medians[kind] / medians["csv"], cpu[kind] / cpu["csv"]
    print(f"  {kind:<10} {sizes[kind]:>12,} {medians[kind]:>8.2f} {ratio:>7.2f}x {cpu[kind]:>8.2f} {cpu_ratio:>7.2f}x "
          f"{('<= %.2fx' % target) if target else '':>8}")
if MEMORY:
    print(f"  peak RSS, .csv.gz import: 150,000 rows {small:.1f} MB, 1,500,000 rows {large:.1f} MB: "
          f"{large / small:.2f}x (target <= 1.25x, < 96 MB)")
result = {"benchmark": "feeds", "rows": ROWS, "runs": RUNS, "binary": BIN,
          "seconds": {kind: round(value, 3) for kind, value in medians.items()},
          "cpu_seconds": {kind: round(value, 3) for kind, value in cpu.items()},
          "gzip_ratio": round(medians["csv.gz"] / medians["csv"], 3),
          "zstd_ratio": round(medians["csv.zst"] / medians["csv"], 3),
          "http_ratio": round(medians["http csv"] / medians["csv"], 3),
          "s3_ratio": round(medians["s3 csv"] / medians["csv"], 3),
          "peak_rss_mb_150k_gz": round(small, 1), "peak_rss_mb_1500k_gz": round(large, 1),
          "peak_rss_ratio": round(large / small, 2) if small else None}
with open(f"{ROOT}/.build-bench/feeds.json", "w") as out:
    json.dump(result, out, indent=2)
