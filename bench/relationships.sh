#!/bin/sh
# Issue 34: what delete rules cost a delete step. Two stores alike (20,000 airlines, 200,000
# flights and 100,000 crew, both columns indexed); the step deletes every other airline. With
# `references ... on delete cascade` on Flight and `set null` on Crew the same step also deletes
# 100,000 flights and nulls 50,000 crew; without, it deletes the airlines only.
# Usage: bench/relationships.sh [BATCHRUN] (default .build/debug/batchrun); prints wall, user, sys.
set -eu
BIN=$(cd "$(dirname "${1:-.build/debug/batchrun}")" && pwd)/$(basename "${1:-.build/debug/batchrun}")
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cd "$DIR"
for mode in plain refs; do
    if [ $mode = refs ]; then R=" references Airline on delete cascade"; C=" references Airline on delete set null"; else R=""; C=""; fi
    cat > $mode.yaml <<YAML
version: 1
store: run-$mode.sqlite
entities:
  Airline:
    columns: { id: integer primary key, name: text }
  Flight:
    columns: { id: integer primary key, airline_id: "integer$R" }
    indexes: [[airline_id]]
  Crew:
    columns: { id: integer primary key, airline_id: "integer$C" }
    indexes: [[airline_id]]
jobs:
  purge:
    steps:
      - delete: { entity: Airline, where: "id % 2 = 0" }
YAML
    sqlite3 $mode.sqlite "CREATE TABLE Airline(id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE Flight(id INTEGER PRIMARY KEY, airline_id INTEGER); CREATE TABLE Crew(id INTEGER PRIMARY KEY, airline_id INTEGER);
        CREATE INDEX fa ON Flight(airline_id); CREATE INDEX ca ON Crew(airline_id);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 20000) INSERT INTO Airline SELECT i, 'a'||i FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200000) INSERT INTO Flight SELECT i, (i % 20000) + 1 FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 100000) INSERT INTO Crew SELECT i, (i % 20000) + 1 FROM n;"
done
for run in 1 2 3; do
    for mode in plain refs; do
        cp $mode.sqlite run-$mode.sqlite
        /usr/bin/time -f "$mode run $run: %e s wall, %U s user, %S s sys, %M KB" "$BIN" $mode.yaml --no-progress >/dev/null
    done
done
sqlite3 run-refs.sqlite "SELECT 'refs left: ' || (SELECT count(*) FROM Airline) || ' airlines, ' || (SELECT count(*) FROM Flight) || ' flights, ' || (SELECT count(*) FROM Crew WHERE airline_id IS NULL) || ' crew nulled'"
uptime
