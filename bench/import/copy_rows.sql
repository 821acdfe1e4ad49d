-- The same copy as copy.sql, row by row: the WHERE clause turns off SQLite's transfer
-- optimization (which moves whole records without decoding them when both tables have the
-- same schema), so SQLite reads each row's values and builds its record again, as any
-- insert of values does. This is SQLite's own speed for inserting these rows.
PRAGMA synchronous = NORMAL;
ATTACH '.build-bench/import/source.sqlite' AS s;
INSERT INTO flights SELECT * FROM s.flights WHERE 1;
