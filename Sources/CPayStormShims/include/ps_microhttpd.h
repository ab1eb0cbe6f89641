#ifndef PS_MICROHTTPD_H
#define PS_MICROHTTPD_H
/* Wrappers for microhttpd macros and variadic calls; filled in by the module that needs them. */
#endif
