/* The practical limit for importing the flight feed: one prepared statement, typed binds,
 * one transaction, into a fresh WAL database with the same schema. Written for batchrun's
 * benchmark; the feed has no quoted fields, so a line is split on commas.
 *   cc -O2 -o import_flights import_flights.c -lsqlite3 && ./import_flights flights.csv out.sqlite schema.sql
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Column types of the feed's 19 fields: i integer, r real, t text. */
static const char *TYPES = "iiiiiiiiititttiriit";

static void check(int code, sqlite3 *db, const char *what) {
    if (code != SQLITE_OK && code != SQLITE_DONE && code != SQLITE_ROW) {
        fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static char *read_file(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) { perror(path); exit(1); }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = malloc(size + 1);
    if (fread(text, 1, size, file) != (size_t)size) { perror(path); exit(1); }
    text[size] = 0;
    fclose(file);
    return text;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s FEED.csv OUT.sqlite SCHEMA.sql\n", argv[0]); return 2; }
    sqlite3 *db;
    check(sqlite3_open(argv[2], &db), db, "open");
    check(sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL", 0, 0, 0), db, "pragma");
    char *schema = read_file(argv[3]);
    check(sqlite3_exec(db, schema, 0, 0, 0), db, "schema");
    sqlite3_stmt *insert;
    check(sqlite3_prepare_v2(db,
        "INSERT INTO flights (year, month, day, dep_time, sched_dep_time, dep_delay, arr_time, sched_arr_time, "
        "arr_delay, carrier, flight, tailnum, origin, dest, air_time, distance, hour, minute, time_hour) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &insert, 0), db, "prepare");
    FILE *feed = fopen(argv[1], "r");
    if (!feed) { perror(argv[1]); return 1; }
    char line[4096];
    if (!fgets(line, sizeof line, feed)) return 1;   /* header */
    check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db, "begin");
    long rows = 0;
    while (fgets(line, sizeof line, feed)) {
        size_t length = strcspn(line, "\r\n");
        line[length] = 0;
        char *field = line;
        for (int column = 0; column < 19; column++) {
            char *end = strchr(field, ',');
            if (end) *end = 0;
            int index = column + 1;
            if (strcmp(field, "NA") == 0) {
                sqlite3_bind_null(insert, index);
            } else if (TYPES[column] == 'i') {
                sqlite3_bind_int64(insert, index, strtoll(field, 0, 10));
            } else if (TYPES[column] == 'r') {
                sqlite3_bind_double(insert, index, strtod(field, 0));
            } else {
                sqlite3_bind_text(insert, index, field, -1, SQLITE_TRANSIENT);
            }
            field = end ? end + 1 : field + strlen(field);
        }
        check(sqlite3_step(insert), db, "insert");
        sqlite3_reset(insert);
        rows++;
    }
    check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db, "commit");
    sqlite3_finalize(insert);
    sqlite3_close(db);
    fprintf(stderr, "%ld rows\n", rows);
    return 0;
}
