#!/usr/bin/env python3
"""PostgreSQL in production (issue 31), against throwaway local servers this script starts and
stops (Tests/TestSupport/pg-throwaway.sh), medians of RUNS (default 3):
  - a restart mid-import: the 1,000,000-row flight import (bench/import/flights.yaml), once
    undisturbed and once with the server stopped (`pg_ctl stop -m fast`), kept down 3 s and
    started again (same port and data) after the first rows are in. The restart's cost is the
    difference; target: at most the outage (stop, 3 s, start) plus one batch (10,000 rows) of
    the undisturbed import;
  - TLS: the same import over TLS (`sslmode=require`, a server with `ssl = on` and a
    certificate openssl makes here) against the same server without (`sslmode=disable`),
    alternating; target: at most 1.15x.
Writes .build-bench/reconnect.json.
    bench/reconnect.py [ROWS]      (a release build; ONLY=restart,tls picks parts)
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
RUNS = int(os.environ.get("RUNS", "3"))
ONLY = set(os.environ.get("ONLY", "restart,tls").split(","))
ROOT = os.path.abspath(".")
BIN = os.environ.get("BATCHRUN_BIN", f"{ROOT}/.build/release/batchrun")
SERVER = f"{ROOT}/Tests/TestSupport/pg-throwaway.sh"
PG = f"/usr/lib/postgresql/{sorted(os.listdir('/usr/lib/postgresql'), key=int)[-1]}/bin"
BATCH = 10_000   # bench/import/flights.yaml's batch_size
DOWN = 3.0


def psql(url, sql):
    return subprocess.run([f"{PG}/psql", url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
                          check=True, capture_output=True, text=True).stdout.strip()


def start_server(*options):
    lines = subprocess.run(["bash", SERVER, "start", "--owner", str(os.getpid()), *options], check=True,
                           capture_output=True, text=True).stdout.strip().splitlines()
    return lines[-2], lines[-1]   # folder, URL


def database(server, name):
    psql(server, f"DROP DATABASE IF EXISTS {name}")
    psql(server, f"CREATE DATABASE {name}")
    return server.rsplit("/", 1)[0] + "/" + name


def feed():
    path = f"{ROOT}/.build-bench/import/flights-{ROWS}.csv"
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        subprocess.run(["python3", "bench/import/make_flights.py", str(ROWS), path], check=True)
    link = f"{ROOT}/.build-bench/import/flights.csv"
    if os.path.islink(link) or os.path.exists(link):
        os.remove(link)
    os.symlink(os.path.basename(path), link)


def fresh(url):
    psql(url, "DROP TABLE IF EXISTS flights; DROP TABLE IF EXISTS _batchrun_runs, _batchrun_jobs, _batchrun_progress")


def run_import(url, report=None, during=None):
    """The import's wall time; `during(process)` runs while it does."""
    fresh(url)
    command = [BIN, "bench/import/flights.yaml", "--quiet", "--store", url] + (["--report", report] if report else [])
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    if during:
        during(process)
    assert process.wait() == 0, f"the import failed ({process.returncode})"
    seconds = time.perf_counter() - started
    count = psql(url, "SELECT count(*) || ' ' || count(DISTINCT id) FROM flights")
    assert count == f"{ROWS} {ROWS}", f"imported {count} rows"
    return seconds


def restart_figures():
    folder, server = start_server()
    url = database(server, "restart_bench")
    plain, restarted, outages = [], [], []
    try:
        for _ in range(RUNS):
            plain.append(run_import(url))

            def restart(process):
                while process.poll() is None:
                    try:
                        if psql(url, "SELECT count(*) FROM flights") != "0":
                            break
                    except subprocess.CalledProcessError:
                        pass
                    time.sleep(0.02)
                down = time.perf_counter()
                subprocess.run(["bash", SERVER, "halt", folder], check=True)
                time.sleep(DOWN)
                subprocess.run(["bash", SERVER, "resume", folder], check=True)
                outages.append(time.perf_counter() - down)

            report = f"{ROOT}/.build-bench/reconnect-report.json"
            restarted.append(run_import(url, report=report, during=restart))
            reconnects = json.load(open(report))["jobs"][0]["reconnects"]
            assert reconnects >= 1, f"no reconnect counted: {reconnects}"
    finally:
        subprocess.run(["bash", SERVER, "stop", folder], check=False)
    return statistics.median(plain), statistics.median(restarted), statistics.median(outages)


def tls_figures():
    certificates = tempfile.mkdtemp(prefix="batchrun-tls-bench-")
    files = f"{certificates}/files"
    os.makedirs(files)
    subprocess.run(["bash", "-c", f"""set -e; cd '{certificates}'
        key() {{ openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }}
        key ca.key; key server.key
        openssl req -x509 -new -key ca.key -out ca.crt -days 2 -subj '/CN=batchrun bench CA' \\
          -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
        openssl req -new -key server.key -out server.csr -subj '/CN=localhost'
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.crt 2>/dev/null
        cp server.crt server.key files/"""], check=True)
    conf = f"{certificates}/ssl.conf"
    with open(conf, "w") as f:
        f.write("ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n")
    folder, server = start_server("--conf", conf, "--files", files)
    url = database(server, "tls_bench")
    plain, tls = [], []
    try:
        for _ in range(RUNS):
            plain.append(run_import(url + "?sslmode=disable"))
            tls.append(run_import(url + f"?sslmode=verify-ca&sslrootcert={certificates}/ca.crt"))
        assert psql(url + "?sslmode=require", "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()") == "t"
    finally:
        subprocess.run(["bash", SERVER, "stop", folder], check=False)
        shutil.rmtree(certificates, ignore_errors=True)
    return statistics.median(plain), statistics.median(tls)


def main():
    feed()
    nan = float("nan")
    plain, restarted, outage = restart_figures() if "restart" in ONLY else (nan, nan, nan)
    without, over_tls = tls_figures() if "tls" in ONLY else (nan, nan)
    batch = plain / (ROWS / BATCH)
    cost = restarted - plain
    summary = {
        "benchmark": "postgresql-production", "rows": ROWS, "runs": RUNS,
        "restart_s": {"import": round(plain, 3), "import_with_restart": round(restarted, 3), "cost": round(cost, 3),
                      "outage": round(outage, 3), "batch": round(batch, 3), "target": round(outage + batch, 3)},
        "tls_s": {"without": round(without, 3), "tls": round(over_tls, 3), "ratio": round(over_tls / without, 3), "target": 1.15},
    }
    os.makedirs(".build-bench", exist_ok=True)
    json.dump(summary, open(".build-bench/reconnect.json", "w"), indent=2)
    print(f"PostgreSQL in production, local throwaway servers, medians of {RUNS}")
    print(f"  import {ROWS:,} rows with a restart ({DOWN:.0f} s down; outage {outage:.2f} s with stop and start)   "
          f"{restarted:.2f} s against {plain:.2f} s: costs {cost:.2f} s (target at most {outage + batch:.2f} s: the outage and one batch)")
    print(f"  import {ROWS:,} rows over TLS   {over_tls:.2f} s against {without:.2f} s without   {over_tls / without:.2f}x (target at most 1.15x)")


if __name__ == "__main__":
    main()
