-- The sqlite3 shell's baseline: the same table (its rowid implicit, as batchrun's integer key
-- is), .import of the CSV in CSV mode. The shell has no NULL marker: NA stays text.
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE flights (
  year INTEGER NOT NULL, month INTEGER NOT NULL, day INTEGER NOT NULL,
  dep_time INTEGER, sched_dep_time INTEGER NOT NULL, dep_delay INTEGER,
  arr_time INTEGER, sched_arr_time INTEGER NOT NULL, arr_delay INTEGER,
  carrier TEXT NOT NULL, flight INTEGER NOT NULL, tailnum TEXT,
  origin TEXT NOT NULL, dest TEXT NOT NULL, air_time INTEGER, distance REAL NOT NULL,
  hour INTEGER NOT NULL, minute INTEGER NOT NULL, time_hour TEXT NOT NULL
);
.mode csv
.import --skip 1 .build-bench/import/flights.csv flights
