#!/usr/bin/env python3
"""Writes a deterministic flight-delays feed shaped like nycflights13: 19 columns of mixed
integers, reals and text, NA for missing values.
    python3 bench/import/make_flights.py ROWS OUT.csv
"""
import random
import sys

rows, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(13)
CARRIERS = ["9E", "AA", "AS", "B6", "DL", "EV", "F9", "FL", "HA", "MQ", "OO", "UA", "US", "VX", "WN", "YV"]
AIRPORTS = ["EWR", "JFK", "LGA", "ATL", "ORD", "LAX", "BOS", "MCO", "SFO", "CLT", "MIA", "DCA", "DEN", "SEA", "IAH"]
with open(path, "w") as out:
    out.write("year,month,day,dep_time,sched_dep_time,dep_delay,arr_time,sched_arr_time,arr_delay,carrier,"
              "flight,tailnum,origin,dest,air_time,distance,hour,minute,time_hour\n")
    for _ in range(rows):
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        hour, minute = rng.randint(5, 23), rng.choice([0, 5, 10, 15, 20, 30, 45, 55])
        sched_dep = hour * 100 + minute
        cancelled = rng.random() < 0.025
        dep_delay = rng.randint(-20, 180) if not cancelled else None
        dep_time = (sched_dep + (dep_delay or 0)) % 2400 if not cancelled else None
        air_time = rng.randint(25, 400) if not cancelled else None
        sched_arr = (sched_dep + 200 + rng.randint(0, 400)) % 2400
        arr_delay = (dep_delay + rng.randint(-30, 30)) if not cancelled and rng.random() > 0.003 else None
        arr_time = (sched_arr + (arr_delay or 0)) % 2400 if arr_delay is not None else None
        tailnum = f"N{rng.randint(100, 999)}{rng.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}{rng.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}" if rng.random() > 0.008 else None
        origin = rng.choice(AIRPORTS[:3])
        dest = rng.choice(AIRPORTS[3:])
        distance = round(rng.uniform(94, 4983), 1)
        fields = [2013, month, day, dep_time, sched_dep, dep_delay, arr_time, sched_arr, arr_delay, rng.choice(CARRIERS),
                  rng.randint(1, 6500), tailnum, origin, dest, air_time, distance, hour, minute,
                  f"2013-{month:02d}-{day:02d} {hour:02d}:00:00"]
        out.write(",".join("NA" if value is None else str(value) for value in fields) + "\n")
