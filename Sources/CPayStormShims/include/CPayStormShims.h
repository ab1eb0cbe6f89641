/// Typed wrappers for the C calls Swift cannot make (variadic functions and
/// function-like macros). Every symbol has the `ps_` prefix and holds no logic.
#ifndef PAYSTORM_SHIMS_H
#define PAYSTORM_SHIMS_H
#include "ps_curl.h"
#include "ps_openssl.h"
#include "ps_microhttpd.h"
#include "ps_sqlite.h"
#include "ps_process.h"
#endif
