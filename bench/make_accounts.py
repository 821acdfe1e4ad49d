#!/usr/bin/env python3
"""Creates an SQLite store with N Account rows for the update benchmark (deterministic).
    python3 bench/make_accounts.py 1000000 .build-bench/accounts.sqlite
"""
import os
import sqlite3
import sys

count, path = int(sys.argv[1]), sys.argv[2]
os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
for suffix in ("", "-wal", "-shm"):
    if os.path.exists(path + suffix):
        os.remove(path + suffix)
db = sqlite3.connect(path)
db.execute("PRAGMA journal_mode = WAL")
db.execute("CREATE TABLE Account (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, balance INTEGER NOT NULL, "
           "status TEXT NOT NULL DEFAULT 'open')")
db.execute("CREATE INDEX Account_status_idx ON Account (status)")
db.executemany("INSERT INTO Account VALUES (?, ?, ?, 'open')",
               ((i, f"owner{i % 5000}", i % 1000) for i in range(1, count + 1)))
db.commit()
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
db.close()
