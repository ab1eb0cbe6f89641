#define _GNU_SOURCE
#include <spawn.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "ps_process.h"

int ps_posix_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

short ps_posix_spawn_setsid(void) {
    return POSIX_SPAWN_SETSID;
}

int ps_malloc_trim(unsigned long pad) {
#ifdef __GLIBC__
    return malloc_trim(pad);
#else
    (void)pad;
    return 0;
#endif
}
