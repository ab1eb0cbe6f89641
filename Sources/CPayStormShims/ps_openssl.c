#include "ps_openssl.h"
