#define _GNU_SOURCE
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "ps_process.h"

int ps_malloc_trim(unsigned long pad) {
#ifdef __GLIBC__
    return malloc_trim(pad);
#else
    (void)pad;
    return 0;
#endif
}

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t ps_spawn_session(const char *file, char *const argv[], char *const envp[], int in, int out, int err,
                       int death_signal) {
    // Blocked until the child has exec'd or failed: a handler of PayStorm's must never run in the child, which
    // shares PayStorm's memory until then.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    pid_t parent = getpid();
    volatile int failure = 0;
    pid_t pid = vfork();
    if (pid == 0) {
        // The child's own table of handlers (vfork shares memory, not handlers): every signal at its default.
        struct sigaction standard = {0};
        standard.sa_handler = SIG_DFL;
        for (int number = 1; number < NSIG; number++) {
            if (number != SIGKILL && number != SIGSTOP) sigaction(number, &standard, NULL);
        }
        setsid();
        if (death_signal != 0) {
            prctl(PR_SET_PDEATHSIG, death_signal);
            // PayStorm died before the line above: no signal would ever come.
            if (getppid() != parent) _exit(127);
        }
        if (in < 0) in = open("/dev/null", O_RDONLY);
        if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
            failure = errno;
            _exit(127);
        }
        closefrom(3);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvpe(file, argv, envp);
        failure = errno;
        _exit(127);
    }
    int spawnError = pid < 0 ? errno : failure;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (spawnError != 0) {
        if (pid > 0) waitpid(pid, NULL, 0);
        errno = spawnError;
        return -1;
    }
    return pid;
}
