// Loaded (LD_PRELOAD) into the builds that bench/split.sh counts under valgrind 3.19.
//
// libdispatch's signal thread calls sigsuspend() with a mask in read-only memory, and valgrind
// 3.19 writes into the mask it is given (it removes its own signals from it) before the call:
// valgrind dies with SIGSEGV at the first thread. Handing the kernel a copy on the stack is the
// same call for the program, and valgrind may write the copy. Newer valgrind does not need this.
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
