CREATE TABLE flights (
  id INTEGER PRIMARY KEY,
  year INTEGER NOT NULL, month INTEGER NOT NULL, day INTEGER NOT NULL,
  dep_time INTEGER, sched_dep_time INTEGER NOT NULL, dep_delay INTEGER,
  arr_time INTEGER, sched_arr_time INTEGER NOT NULL, arr_delay INTEGER,
  carrier TEXT NOT NULL, flight INTEGER NOT NULL, tailnum TEXT,
  origin TEXT NOT NULL, dest TEXT NOT NULL, air_time INTEGER, distance REAL NOT NULL,
  hour INTEGER NOT NULL, minute INTEGER NOT NULL, time_hour TEXT NOT NULL
);
