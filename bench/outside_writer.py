#!/usr/bin/env python3
"""Another program writing while a batch-update runs: changes 1% of the Account rows (random,
deterministic), 100 rows per transaction, a transaction every 10 ms, until done or killed.
    python3 bench/outside_writer.py STORE.sqlite ROWS
"""
import random
import sqlite3
import sys
import time

path, rows = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(path, timeout=30, isolation_level=None)
ids = random.Random(7).sample(range(1, rows + 1), rows // 100)
for start in range(0, len(ids), 100):
    chunk = ids[start:start + 100]
    db.execute("BEGIN IMMEDIATE")
    db.execute(f"UPDATE Account SET owner = owner || '*' WHERE id IN ({','.join(map(str, chunk))})")
    db.execute("COMMIT")
    time.sleep(0.01)
