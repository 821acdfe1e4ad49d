#!/usr/bin/env python3
"""Writes the small example feeds in examples/data/ (deterministic: the same bytes every run).

A meditation app's data: users, their sessions (minutes meditated, some durations
missing as NA), mood check-ins and daily goals.
    python3 examples/generate_data.py
"""
import json
import os
import random

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
rng = random.Random(20260101)
USERS = [f"user{n:03d}" for n in range(1, 51)]
PLANS = ["free", "plus", "family"]


def sessions(path, count=2000):
    with open(path, "w", newline="") as out:
        out.write("id,user,started_at,duration,status\n")
        for n in range(1, count + 1):
            year = rng.choice([2019, 2020, 2021, 2022, 2023, 2024, 2025, 2025, 2026, 2026, 2026])
            month = rng.randint(1, 6 if year == 2026 else 12)
            day = rng.randint(1, 28)
            hour, minute = rng.randint(5, 22), rng.randint(0, 59)
            started = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:00Z"
            duration = "NA" if rng.random() < 0.03 else f"{rng.uniform(3, 60):.1f}"
            status = "open" if rng.random() < 0.7 else "closed"
            out.write(f"{n},{rng.choice(USERS)},{started},{duration},{status}\n")


def users(path):
    with open(path, "w") as out:
        for n, name in enumerate(USERS, start=1):
            record = {"name": name, "plan": rng.choice(PLANS), "joined": f"20{rng.randint(19, 25)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
                      "newsletter": rng.random() < 0.4}
            out.write(json.dumps(record) + "\n")


def moods(path, count=300):
    records = []
    for n in range(1, count + 1):
        records.append({"id": n, "user": rng.choice(USERS), "mood": rng.randint(1, 5),
                        "note": rng.choice([None, "calm", "restless", "tired, but ok", "said \"hello\" to the day"])})
    with open(path, "w") as out:
        json.dump(records, out, indent=1)
        out.write("\n")


def goals(path):
    with open(path, "w") as out:
        out.write("user\tdaily_minutes\n")
        for name in USERS:
            out.write(f"{name}\t{rng.choice([5, 10, 15, 20, 30])}\n")


if __name__ == "__main__":
    os.makedirs(HERE, exist_ok=True)
    sessions(os.path.join(HERE, "sessions.csv"))
    users(os.path.join(HERE, "users.ndjson"))
    moods(os.path.join(HERE, "moods.json"))
    goals(os.path.join(HERE, "goals.tsv"))
    # The same sessions gzip-compressed, for examples/import_compressed.yaml (mtime 0: the same bytes every time).
    import gzip
    with open(os.path.join(HERE, "sessions.csv"), "rb") as plain, open(os.path.join(HERE, "sessions.csv.gz"), "wb") as raw:
        with gzip.GzipFile(filename="sessions.csv", mode="wb", fileobj=raw, mtime=0) as packed:
            packed.write(plain.read())
