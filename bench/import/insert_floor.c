/* SQLite's insert floor for the flight feed: what inserting the rows costs SQLite alone, with
 * nothing else in the way. The feed is read and converted to typed values in memory first (not
 * timed); then, timed, the rows go into a fresh WAL database with the schema given, the way
 * batchrun writes them: multi-row INSERTs of 128 rows (19 typed binds each, text bound without a
 * copy) through one statement prepared once, transactions of 10,000 rows, synchronous = NORMAL,
 * a connection without a mutex (as GRDB opens it), and the store closed (its last checkpoint).
 * Prints the timed seconds. No importer that goes through SQLite's insert can take less.
 * With "beside" as a fourth argument, the checkpoints are taken as batchrun takes them
 * (Sources/BatchRunSQLite/WALCheckpointer.swift): a commit past 1,000 WAL pages has a second
 * connection on a thread of its own checkpoint (PASSIVE), and the writer checkpoints itself only
 * past 4,000 pages, after waiting for the one in flight; without it, as SQLite does by default
 * (the writer, past 1,000 pages).
 *   cc -O2 -o insert_floor insert_floor.c -lsqlite3 -lpthread && ./insert_floor flights.csv out.sqlite schema.sql [beside]
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

enum { COLUMNS = 19, ROWS_PER_STATEMENT = 128, ROWS_PER_TRANSACTION = 10000 };

/* Column types of the feed's 19 fields: i integer, r real, t text. */
static const char *TYPES = "iiiiiiiiititttiriit";

typedef struct { char kind; long long integer; double real; const char *text; int length; } Cell;

static void check(int code, sqlite3 *db, const char *what) {
    if (code != SQLITE_OK && code != SQLITE_DONE && code != SQLITE_ROW) {
        fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static char *read_file(const char *path, long *size) {
    FILE *file = fopen(path, "rb");
    if (!file) { perror(path); exit(1); }
    fseek(file, 0, SEEK_END);
    *size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = malloc(*size + 1);
    if (fread(text, 1, *size, file) != (size_t)*size) { perror(path); exit(1); }
    text[*size] = 0;
    fclose(file);
    return text;
}

static double now(void) {
    struct timespec clock;
    clock_gettime(CLOCK_MONOTONIC, &clock);
    return clock.tv_sec + clock.tv_nsec / 1e9;
}

/* Checkpoints beside the writer: the writer's WAL hook asks, a thread with its own connection copies. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int asked, running, done;
    const char *path;
} beside = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0 };

static int committed(void *unused, sqlite3 *db, const char *name, int pages) {
    (void)unused;
    pthread_mutex_lock(&beside.lock);
    if (pages >= 4000) {
        while (beside.asked || beside.running) pthread_cond_wait(&beside.changed, &beside.lock);
        pthread_mutex_unlock(&beside.lock);
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, 0, 0);
        return SQLITE_OK;
    }
    if (pages >= 1000 && !beside.asked) {
        beside.asked = 1;
        pthread_cond_broadcast(&beside.changed);
    }
    pthread_mutex_unlock(&beside.lock);
    return SQLITE_OK;
}

static void *checkpointer(void *unused) {
    (void)unused;
    sqlite3 *db;
    check(sqlite3_open_v2(beside.path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, 0), db, "open beside");
    check(sqlite3_exec(db, "PRAGMA schema_version", 0, 0, 0), db, "read beside");   /* opens its WAL */
    pthread_mutex_lock(&beside.lock);
    while (1) {
        while (!beside.asked && !beside.done) pthread_cond_wait(&beside.changed, &beside.lock);
        if (beside.done) break;
        beside.asked = 0;
        beside.running = 1;
        pthread_mutex_unlock(&beside.lock);
        sqlite3_wal_checkpoint_v2(db, 0, SQLITE_CHECKPOINT_PASSIVE, 0, 0);
        pthread_mutex_lock(&beside.lock);
        beside.running = 0;
        pthread_cond_broadcast(&beside.changed);
    }
    pthread_mutex_unlock(&beside.lock);
    sqlite3_close(db);
    return 0;
}

static void bind(sqlite3_stmt *statement, int index, const Cell *cell) {
    switch (cell->kind) {
    case 'n': sqlite3_bind_null(statement, index); break;
    case 'i': sqlite3_bind_int64(statement, index, cell->integer); break;
    case 'r': sqlite3_bind_double(statement, index, cell->real); break;
    default: sqlite3_bind_text(statement, index, cell->text, cell->length, SQLITE_STATIC);
    }
}

static sqlite3_stmt *prepare(sqlite3 *db, int rows) {
    static char sql[1 << 16];
    char *end = sql + sprintf(sql, "INSERT INTO flights (year, month, day, dep_time, sched_dep_time, dep_delay, arr_time, "
        "sched_arr_time, arr_delay, carrier, flight, tailnum, origin, dest, air_time, distance, hour, minute, time_hour) VALUES ");
    for (int row = 0; row < rows; row++) end += sprintf(end, "%s(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", row ? "," : "");
    sqlite3_stmt *statement;
    check(sqlite3_prepare_v2(db, sql, -1, &statement, 0), db, "prepare");
    return statement;
}

static void run(sqlite3 *db, sqlite3_stmt *statement, const Cell *cells, long first, int rows) {
    int index = 1;
    for (long row = first; row < first + rows; row++)
        for (int column = 0; column < COLUMNS; column++) bind(statement, index++, &cells[row * COLUMNS + column]);
    check(sqlite3_step(statement), db, "insert");
    sqlite3_reset(statement);
}

int main(int argc, char **argv) {
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "beside") == 0)) {
        fprintf(stderr, "usage: %s FEED.csv OUT.sqlite SCHEMA.sql [beside]\n", argv[0]);
        return 2;
    }
    long size, schemaSize;
    char *feed = read_file(argv[1], &size), *schema = read_file(argv[3], &schemaSize);
    long capacity = 1 << 16, count = 0;
    Cell *cells = malloc(sizeof(Cell) * COLUMNS * capacity);
    char *line = strchr(feed, '\n') + 1;   /* after the header */
    while (*line) {
        if (count == capacity) cells = realloc(cells, sizeof(Cell) * COLUMNS * (capacity *= 2));
        char *field = line, *end = line;
        for (int column = 0; column < COLUMNS; column++) {
            end = field + strcspn(field, column + 1 < COLUMNS ? "," : "\r\n");
            Cell *cell = &cells[count * COLUMNS + column];
            if (end - field == 2 && field[0] == 'N' && field[1] == 'A') cell->kind = 'n';
            else if (TYPES[column] == 'i') { cell->kind = 'i'; cell->integer = strtoll(field, 0, 10); }
            else if (TYPES[column] == 'r') { cell->kind = 'r'; cell->real = strtod(field, 0); }
            else { cell->kind = 't'; cell->text = field; cell->length = (int)(end - field); }
            field = end + 1;
        }
        line = end + strspn(end, "\r\n");
        count++;
    }
    double start = now();
    sqlite3 *db;
    check(sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, 0), db, "open");
    check(sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL", 0, 0, 0), db, "pragma");
    check(sqlite3_exec(db, schema, 0, 0, 0), db, "schema");
    pthread_t thread;
    if (argc == 5) {
        beside.path = argv[2];
        sqlite3_wal_hook(db, committed, 0);
        pthread_create(&thread, 0, checkpointer, 0);
    }
    sqlite3_stmt *full = prepare(db, ROWS_PER_STATEMENT), *one = prepare(db, 1);
    for (long first = 0; first < count; first += ROWS_PER_TRANSACTION) {
        long end = first + ROWS_PER_TRANSACTION < count ? first + ROWS_PER_TRANSACTION : count, row = first;
        check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db, "begin");
        for (; row + ROWS_PER_STATEMENT <= end; row += ROWS_PER_STATEMENT) run(db, full, cells, row, ROWS_PER_STATEMENT);
        for (; row < end; row++) run(db, one, cells, row, 1);
        check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db, "commit");
    }
    if (argc == 5) {
        pthread_mutex_lock(&beside.lock);
        beside.done = 1;
        pthread_cond_broadcast(&beside.changed);
        pthread_mutex_unlock(&beside.lock);
        pthread_join(thread, 0);
    }
    sqlite3_finalize(full);
    sqlite3_finalize(one);
    check(sqlite3_close(db), db, "close");
    printf("%.3f\n", now() - start);
    return 0;
}
