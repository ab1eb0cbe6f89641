#include "ps_sqlite.h"
