#!/usr/bin/env python3
"""Resuming an import (issue 9): the 1,000,000-row flights import is killed with SIGKILL once
90% of its rows are committed, then `batchrun --resume` finishes it. Prints the median time of
the resumed run against the median of a whole import (target: at most 15%), and what each check
found; writes .build-bench/resume.json.
    bench/resume.py [RUNS]      (after bench/import.sh 1000000 made the feed; a release build)
"""
import json, os, signal, sqlite3, statistics, subprocess, sys, time

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
BIN = ".build/release/batchrun"
JOB = "bench/import/flights.yaml"
STORE = ".build-bench/import/batchrun.sqlite"
ROWS = 1_000_000


def fresh():
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(STORE + suffix)
        except FileNotFoundError:
            pass


def committed():
    """Rows the import's checkpoints count so far (0 before the run state exists)."""
    try:
        db = sqlite3.connect(f"file:{STORE}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute("SELECT coalesce(sum(inserted), 0) FROM _batchrun_progress").fetchone()
            return row[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def timed(arguments):
    started = time.perf_counter()
    subprocess.run([BIN, JOB, "--quiet", *arguments], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


whole, resumed, done_at_kill = [], [], []
timed([])  # warm-up
for _ in range(RUNS):
    fresh()
    whole.append(timed([]))
    fresh()
    process = subprocess.Popen([BIN, JOB, "--quiet"], stdout=subprocess.DEVNULL)
    while process.poll() is None and committed() < ROWS * 9 // 10:
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done = committed()
    if done >= ROWS:
        continue  # the import ended before the kill: try again next round
    done_at_kill.append(done)
    resumed.append(timed(["--resume"]))
    db = sqlite3.connect(STORE)
    count = db.execute("SELECT count(*) FROM flights").fetchone()[0]
    db.close()
    assert count == ROWS, f"the resumed import left {count} rows, not {ROWS}"

full, rest = statistics.median(whole), statistics.median(resumed)
summary = {
    "rows": ROWS, "runs": len(resumed),
    "whole_import_median_s": round(full, 3),
    "resume_median_s": round(rest, 3),
    "resume_percent_of_whole": round(100 * rest / full, 1),
    "committed_at_kill_median": int(statistics.median(done_at_kill)),
    "target_percent": 15,
}
os.makedirs(".build-bench", exist_ok=True)
json.dump(summary, open(".build-bench/resume.json", "w"), indent=2)
print(f"resume of a {ROWS:,}-row import killed at {summary['committed_at_kill_median']:,} rows (median of {len(resumed)} runs)")
print(f"  whole import   {full:7.3f} s")
print(f"  resumed run    {rest:7.3f} s   {summary['resume_percent_of_whole']:5.1f}% of the whole (target at most 15%)")
