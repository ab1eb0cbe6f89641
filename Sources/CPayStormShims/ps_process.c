#define _GNU_SOURCE
#include <spawn.h>
#include "ps_process.h"

int ps_posix_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

short ps_posix_spawn_setsid(void) {
    return POSIX_SPAWN_SETSID;
}
