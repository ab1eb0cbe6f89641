#ifndef PS_SQLITE_H
#define PS_SQLITE_H
/* Wrappers for sqlite macros and variadic calls; filled in by the module that needs them. */
#endif
