#define _GNU_SOURCE
#include "CPlatform.h"
#include <errno.h>
#include <spawn.h>
#include <sys/socket.h>
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
