#include "ps_microhttpd.h"
