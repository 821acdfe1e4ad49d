-- SQLite's own speed for the same rows: the shell copies the table batchrun imported into an
-- empty table of the same schema (created by bench/import.sh from the imported store).
PRAGMA synchronous = NORMAL;
ATTACH '.build-bench/import/source.sqlite' AS s;
INSERT INTO flights SELECT * FROM s.flights;
