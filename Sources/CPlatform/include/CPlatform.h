#ifndef C_PLATFORM_H
#define C_PLATFORM_H
#include <stdint.h>

/// The few system calls Swift cannot make directly (variadic C, or a library without a module).

/// Keeps secrets out of core dumps and away from debuggers of the same user: RLIMIT_CORE 0 and, on Linux,
/// PR_SET_DUMPABLE 0 (as ssh-agent and gpg-agent do). Returns 0, or -1 if either call failed.
int keystore_disable_core_dumps(void);

/// The pid and uid of a Unix socket's peer as the kernel recorded them at connect (SO_PEERCRED, whose struct
/// ucred needs _GNU_SOURCE). Returns 0, or -1 with errno set.
int keystore_peer_credentials(int fd, int32_t *pid, uint32_t *uid);

/// Adds "close every descriptor from `lowest` up" to posix_spawn file actions (glibc's
/// posix_spawn_file_actions_addclosefrom_np, declared only under _GNU_SOURCE). Returns 0 or an error number.
int keystore_spawn_close_from(void *actions, int lowest);

/// One line to syslog at LOG_INFO, as "keystore-agent" (syslog itself is variadic).
void keystore_syslog(const char *line);

#endif
