#!/usr/bin/env python3
"""Creates an SQLite store with N Reading rows whose values lie scattered over the keys
(deterministic), for the scattered batch-update and delete of bench/memory.sh: about half the
rows have `value > 50`, in no run of keys.
    python3 bench/make_readings.py 1500000 .build-bench/readings-1500k.sqlite
"""
import os
import random
import sqlite3
import sys

count, path = int(sys.argv[1]), sys.argv[2]
os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
for suffix in ("", "-wal", "-shm"):
    if os.path.exists(path + suffix):
        os.remove(path + suffix)
values = random.Random(29)
db = sqlite3.connect(path)
db.execute("PRAGMA journal_mode = WAL")
db.execute("CREATE TABLE Reading (id INTEGER PRIMARY KEY, value INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'new')")
db.executemany("INSERT INTO Reading VALUES (?, ?, 'new')", ((i, values.randrange(101)) for i in range(1, count + 1)))
db.commit()
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
db.close()
