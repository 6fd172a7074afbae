#define _GNU_SOURCE
#include "CPlatform.h"
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <sys/resource.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

int keystore_disable_core_dumps(void) {
    struct rlimit none = {0, 0};
    int result = setrlimit(RLIMIT_CORE, &none);
#if defined(__linux__)
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) result = -1;
#endif
    return result == 0 ? 0 : -1;
}

int keystore_reset_fatal_signals(void) {
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGQUIT};
    struct sigaction standard;
    memset(&standard, 0, sizeof standard);
    standard.sa_handler = SIG_DFL;
    sigemptyset(&standard.sa_mask);
    int result = 0;
    for (unsigned i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        if (sigaction(fatal[i], &standard, NULL) != 0) result = -1;
    }
    return result;
}

int keystore_peer_credentials(int fd, int32_t *pid, uint32_t *uid) {
#ifdef __linux__
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *pid = credentials.pid;
    *uid = credentials.uid;
    return 0;
#else
    (void)fd; (void)pid; (void)uid;
    errno = ENOSYS;
    return -1;
#endif
}

long keystore_receive_with_sender(int fd, void *buffer, unsigned long size, int32_t *pid) {
    struct iovec data = { .iov_base = buffer, .iov_len = size };
    union { struct cmsghdr header; char space[CMSG_SPACE(sizeof(struct ucred))]; } control;
    struct msghdr message = { .msg_iov = &data, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control };
    *pid = 0;
    ssize_t count = recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
    if (count <= 0) return count;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_CREDENTIALS &&
            header->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(header), sizeof credentials);
            *pid = credentials.pid;
        }
    }
    return count;
}

// Linux 6.5's options that name a message's sender by a pidfd (asm-generic/socket.h, linux/socket.h), for C
// libraries whose headers predate them. Their values are the generic ones, which x86, Arm and RISC-V share; any
// other architecture goes without, as an older kernel does.
#if defined(__linux__) && !defined(SO_PASSPIDFD) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) || defined(__riscv))
#define SO_PASSPIDFD 76
#define SO_PEERPIDFD 77
#endif
#if defined(SO_PASSPIDFD) && !defined(SCM_PIDFD)
#define SCM_PIDFD 0x04
#endif

int keystore_identify_senders(int fd) {
#if defined(__linux__) && defined(SO_PASSPIDFD)
    int on = 1, off = 0;
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) return -1;
    if (setsockopt(fd, SOL_SOCKET, SO_PASSPIDFD, &on, sizeof on) != 0) {
        int code = errno;
        setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &off, sizeof off);
        errno = code;
        return -1;
    }
    return 0;
#else
    (void)fd;
    errno = ENOPROTOOPT;
    return -1;
#endif
}

int keystore_peer_pidfd(int fd) {
#if defined(__linux__) && defined(SO_PEERPIDFD)
    int pidfd = -1;
    socklen_t length = sizeof pidfd;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) != 0) return -1;
    if (length != sizeof pidfd || pidfd < 0) {
        errno = ESRCH;
        return -1;
    }
    // Not inherited by a process the agent might start.
    fcntl(pidfd, F_SETFD, FD_CLOEXEC);
    return pidfd;
#else
    (void)fd;
    errno = ENOPROTOOPT;
    return -1;
#endif
}

int keystore_pidfd_names_live_process(int pidfd) {
#if defined(__linux__) && defined(SYS_pidfd_send_signal)
    if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0) return 1;
    return errno == ESRCH ? 0 : -1;
#else
    (void)pidfd;
    errno = ENOSYS;
    return -1;
#endif
}

long keystore_receive_from_sender(int fd, void *buffer, unsigned long size, int *pidfd, int *pidfd_error, int32_t *pid, uint32_t *uid) {
    *pidfd = -1;
    *pidfd_error = 0;
    *pid = 0;
    *uid = (uint32_t)-1;
#if defined(__linux__) && defined(SO_PASSPIDFD)
    struct iovec data = { .iov_base = buffer, .iov_len = size };
    // Room for the credentials, the pidfd and a few descriptors more: descriptors a client passes (SCM_RIGHTS) are
    // installed here only as far as they fit, and closed below; the kernel closes those that do not fit.
    union { struct cmsghdr header; char space[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int)) + CMSG_SPACE(4 * sizeof(int))]; } control;
    struct msghdr message = { .msg_iov = &data, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control };
    ssize_t count = recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
    if (count < 0) return count;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET) continue;
        if (header->cmsg_type == SCM_CREDENTIALS && header->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(header), sizeof credentials);
            *pid = credentials.pid;
            *uid = credentials.uid;
        } else if (header->cmsg_type == SCM_PIDFD && header->cmsg_len == CMSG_LEN(sizeof(int))) {
            int received;
            memcpy(&received, CMSG_DATA(header), sizeof received);
            if (*pidfd >= 0) close(*pidfd);
            // A negative number is the kernel's error for a pidfd it could not make (-ESRCH: the sender is gone).
            *pidfd = received >= 0 ? received : -1;
            *pidfd_error = received >= 0 ? 0 : -received;
        } else if (header->cmsg_type == SCM_RIGHTS) {
            size_t bytes = header->cmsg_len - CMSG_LEN(0);
            for (size_t offset = 0; offset + sizeof(int) <= bytes; offset += sizeof(int)) {
                int passed;
                memcpy(&passed, CMSG_DATA(header) + offset, sizeof passed);
                close(passed);
            }
        }
    }
    return count;
#else
    (void)fd; (void)buffer; (void)size;
    errno = ENOPROTOOPT;
    return -1;
#endif
}

int keystore_spawn_chdir(void *actions, const char *directory) {
    return posix_spawn_file_actions_addchdir_np((posix_spawn_file_actions_t *)actions, directory);
}

int keystore_spawn_close_from(void *actions, int lowest) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, lowest);
#else
    (void)actions; (void)lowest;
    return ENOSYS;
#endif
}

void keystore_syslog(const char *line) {
    openlog("keystore-agent", LOG_PID, LOG_USER);
    syslog(LOG_INFO, "%s", line);
}

// The holds' shared state: a signal handler can reach nothing else. `holds` counts the threads holding, under
// `holding`; the handlers are installed by the first and put back by the last. The handler writes only `arrived`.
static const int ending_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};
enum { ending_count = sizeof ending_signals / sizeof ending_signals[0] };
static pthread_mutex_t holding = PTHREAD_MUTEX_INITIALIZER;
static int holds;
static struct sigaction previous_actions[ending_count];
static int noting[ending_count];
static volatile sig_atomic_t arrived[ending_count];

static void note_arrival(int number) {
    for (int i = 0; i < ending_count; i++) {
        if (ending_signals[i] == number) arrived[i] = 1;
    }
}

static int ignored(const struct sigaction *action) {
    return !(action->sa_flags & SA_SIGINFO) && action->sa_handler == SIG_IGN;
}

int keystore_hold_signals(sigset_t *previous) {
    sigset_t held;
    sigemptyset(&held);
    for (int i = 0; i < ending_count; i++) sigaddset(&held, ending_signals[i]);
    // SIGPIPE is sent to the thread whose write failed: blocked here, that write returns EPIPE instead.
    sigaddset(&held, SIGPIPE);
    int blocked = pthread_sigmask(SIG_BLOCK, &held, previous);
    if (blocked != 0) {
        errno = blocked;
        return -1;
    }
    // Another thread (libdispatch's, an app's) that does not block them would otherwise take them, and act.
    pthread_mutex_lock(&holding);
    if (holds++ == 0) {
        struct sigaction note;
        memset(&note, 0, sizeof note);
        note.sa_handler = note_arrival;
        sigfillset(&note.sa_mask);
        note.sa_flags = SA_RESTART;
        for (int i = 0; i < ending_count; i++) {
            arrived[i] = 0;
            noting[i] = 0;
            if (sigaction(ending_signals[i], NULL, &previous_actions[i]) != 0) continue;
            if (ignored(&previous_actions[i])) continue;  // nohup's SIGHUP stays ignored
            noting[i] = sigaction(ending_signals[i], &note, NULL) == 0;
        }
    }
    pthread_mutex_unlock(&holding);
    return 0;
}

int keystore_held_signal_arrived(void) {
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    int any = 0;
    pthread_mutex_lock(&holding);
    for (int i = 0; i < ending_count; i++) {
        if (arrived[i] || (sigismember(&pending, ending_signals[i]) && !ignored(&previous_actions[i]))) any = 1;
    }
    pthread_mutex_unlock(&holding);
    return any;
}

void keystore_release_signals(const sigset_t *previous) {
    pthread_mutex_lock(&holding);
    if (--holds == 0) {
        for (int i = 0; i < ending_count; i++) {
            if (noting[i]) sigaction(ending_signals[i], &previous_actions[i], NULL);
            noting[i] = 0;
        }
        for (int i = 0; i < ending_count; i++) {
            if (arrived[i]) kill(getpid(), ending_signals[i]);
            arrived[i] = 0;
        }
    }
    pthread_mutex_unlock(&holding);
    if (!sigismember(previous, SIGPIPE)) {
        sigset_t pipe, pending;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        sigemptyset(&pending);
        sigpending(&pending);
        struct timespec now = {0, 0};
        if (sigismember(&pending, SIGPIPE)) sigtimedwait(&pipe, NULL, &now);
    }
    pthread_sigmask(SIG_SETMASK, previous, NULL);
}
