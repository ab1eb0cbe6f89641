#ifndef PS_PROCESS_H
#define PS_PROCESS_H
/* What Swift's Glibc module does not declare or cannot call. */
#include <sys/types.h>

/* Starts `file` (searched in PATH) with argv and envp in a session of its own, `in` (or /dev/null when -1), `out`
   and `err` as its descriptors 0 to 2 and no other, every signal at its default action and unblocked, and, when
   `death_signal` is not 0, that signal as its parent-death signal (prctl PR_SET_PDEATHSIG): it gets it when the
   thread that started it ends, so with PayStorm however PayStorm ends. The one shim with logic: Swift cannot run
   code between vfork and exec, and posix_spawn cannot set a parent-death signal.
   Returns the child's pid, or -1 with errno set (also when the program cannot be executed). */
pid_t ps_spawn_session(const char *file, char *const argv[], char *const envp[], int in, int out, int err,
                       int death_signal);

/* malloc_trim(pad) from <malloc.h>, which Swift's Glibc module does not include; 0 where glibc is absent. */
int ps_malloc_trim(unsigned long pad);
#endif
