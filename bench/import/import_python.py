#!/usr/bin/env python3
"""Python's sqlite3 baseline for the flight feed: csv.reader, typed conversion (NA as None),
one executemany in one transaction, into a fresh WAL database with the same schema.
    python3 bench/import/import_python.py FEED.csv OUT.sqlite SCHEMA.sql
"""
import csv
import sqlite3
import sys

feed, target, schema = sys.argv[1:4]
TYPES = [int, int, int, int, int, int, int, int, int, str, int, str, str, str, int, float, int, int, str]


def rows():
    with open(feed, newline="") as source:
        reader = csv.reader(source)
        next(reader)
        for record in reader:
            yield tuple(None if value == "NA" else kind(value) for kind, value in zip(TYPES, record))


db = sqlite3.connect(target, isolation_level=None)
db.execute("PRAGMA journal_mode = WAL")
db.execute("PRAGMA synchronous = NORMAL")
db.executescript(open(schema).read())
db.execute("BEGIN")
db.executemany("INSERT INTO flights (year, month, day, dep_time, sched_dep_time, dep_delay, arr_time, sched_arr_time, "
               "arr_delay, carrier, flight, tailnum, origin, dest, air_time, distance, hour, minute, time_hour) "
               "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows())
db.execute("COMMIT")
db.close()
