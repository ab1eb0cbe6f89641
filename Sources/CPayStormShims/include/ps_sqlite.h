#ifndef PS_SQLITE_H
#define PS_SQLITE_H
/* Wrappers for SQLite macros Swift cannot import (SQLITE_TRANSIENT is a cast of -1 to a function pointer). */
#include <sqlite3.h>

/* sqlite3_bind_text with SQLITE_TRANSIENT: SQLite copies the bytes before returning. */
int ps_sqlite3_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length);

/* sqlite3_bind_blob with SQLITE_TRANSIENT. */
int ps_sqlite3_bind_blob_transient(sqlite3_stmt *statement, int index, const void *bytes, int length);
#endif
