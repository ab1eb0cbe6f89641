#ifndef PS_OPENSSL_H
#define PS_OPENSSL_H
/* Wrappers for openssl macros and variadic calls; filled in by the module that needs them. */
#endif
