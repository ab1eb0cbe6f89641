#ifndef PS_PROCESS_H
#define PS_PROCESS_H
/* glibc declares these only under _GNU_SOURCE, which Swift's Glibc module does not define. */
#include <spawn.h>

/* posix_spawn_file_actions_addclosefrom_np: close every descriptor >= from in the child. */
int ps_posix_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from);

/* POSIX_SPAWN_SETSID: the child starts a new session (setsid). */
short ps_posix_spawn_setsid(void);

/* malloc_trim(pad) from <malloc.h>, which Swift's Glibc module does not include; 0 where glibc is absent. */
int ps_malloc_trim(unsigned long pad);
#endif
