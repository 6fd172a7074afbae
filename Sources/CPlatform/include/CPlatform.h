#ifndef C_PLATFORM_H
#define C_PLATFORM_H
#include <signal.h>
#include <stdint.h>

/// The few system calls Swift cannot make directly (variadic C, a library without a module), and signal handlers
/// with the state they share.

/// Keeps secrets out of core dumps and away from debuggers of the same user: RLIMIT_CORE 0 and, on Linux,
/// PR_SET_DUMPABLE 0 (as ssh-agent and gpg-agent do). Returns 0, or -1 if either call failed.
int keystore_disable_core_dumps(void);

/// Gives SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT and SIGQUIT their default action back: with core dumps
/// off, the process ends at once. The Swift runtime installs a crash handler for them before main, by default
/// and as SWIFT_BACKTRACE (set by whoever starts the process) asks, which prints the memory at every register's
/// address and can wait 30 s for a key that opens a debugger on the live process. Returns 0, or -1 if any call
/// failed.
int keystore_reset_fatal_signals(void);

/// The pid and uid of a Unix socket's peer as the kernel recorded them at connect (SO_PEERCRED, whose struct
/// ucred needs _GNU_SOURCE). Returns 0, or -1 with errno set.
int keystore_peer_credentials(int fd, int32_t *pid, uint32_t *uid);

/// recv on a Unix stream socket with SO_PASSCRED set, and the pid of the process that wrote what was read
/// (SCM_CREDENTIALS: the kernel records the writer's own unless it holds CAP_SYS_ADMIN), or 0 in *pid when none
/// came. Returns the count, 0 at the end of the stream, or -1 with errno set.
long keystore_receive_with_sender(int fd, void *buffer, unsigned long size, int32_t *pid);

/// Has the kernel name the sender of everything read from now on on the Unix stream socket `fd` (SO_PASSCRED and
/// Linux 6.5's SO_PASSPIDFD; a listening socket passes both to the connections it accepts). Returns 0, or -1 with
/// errno set (ENOPROTOOPT: this kernel cannot), with neither left on.
int keystore_identify_senders(int fd);

/// A pidfd for the process that connected to the Unix socket `fd` (SO_PEERPIDFD, Linux 6.5), close-on-exec, to
/// be closed by the caller; or -1 with errno set.
int keystore_peer_pidfd(int fd);

/// Whether the process a pidfd names has not been reaped (signal 0 through pidfd_send_signal, Linux 5.1: a process
/// that exited and was not yet reaped still counts, and its pid can be no other's until it is). Returns 1 if so,
/// 0 if it is gone (ESRCH), or -1 with errno set.
int keystore_pidfd_names_live_process(int pidfd);

/// recvmsg on a Unix stream socket that names senders (keystore_identify_senders), and who wrote what was read:
/// a pidfd for the sender in *pidfd (close-on-exec, to be closed by the caller), or -1 with, in *pidfd_error,
/// the error with which the kernel could not make one (ESRCH: the sender was gone) or 0 if none came; its pid and
/// uid in *pid and *uid (0 and (uint32_t)-1 if they did not come). The kernel never joins the writes of two senders in one
/// read. Descriptors the sender passed along (SCM_RIGHTS) are closed. Returns the count, 0 at the end of the
/// stream, or -1 with errno set.
long keystore_receive_from_sender(int fd, void *buffer, unsigned long size, int *pidfd, int *pidfd_error, int32_t *pid, uint32_t *uid);

/// Adds "close every descriptor from `lowest` up" to posix_spawn file actions (glibc's
/// posix_spawn_file_actions_addclosefrom_np, declared only under _GNU_SOURCE). Returns 0 or an error number.
int keystore_spawn_close_from(void *actions, int lowest);

/// Adds "change to `directory`" to posix_spawn file actions (glibc's posix_spawn_file_actions_addchdir_np, declared
/// only under _GNU_SOURCE). Returns 0 or an error number.
int keystore_spawn_chdir(void *actions, const char *directory);

/// One line to syslog at LOG_INFO, as "keystore-agent" (syslog itself is variadic).
void keystore_syslog(const char *line);

/// Holds back, until keystore_release_signals, the signals that ask a process to end (SIGHUP, SIGINT, SIGQUIT,
/// SIGTERM) and SIGPIPE, so that a step which must finish once begun cannot be cut in half: they are blocked on the
/// calling thread, and one that the kernel gives to another thread is caught there and only noted. Holds on several
/// threads at once share that catching, which ends with the last. Returns 0 with the thread's signal mask as it was
/// in *previous, or -1 with errno set (nothing is held then).
int keystore_hold_signals(sigset_t *previous);

/// 1 if SIGHUP, SIGINT, SIGQUIT or SIGTERM (one not ignored) arrived during a hold, else 0.
int keystore_held_signal_arrived(void);

/// Ends the calling thread's hold. With the last hold, every handler is put back as it was, then each noted signal
/// is sent again, so that it meets its own action as if it had just arrived. A SIGPIPE pending on the calling
/// thread is dropped: it came from a write whose EPIPE the caller has handled.
void keystore_release_signals(const sigset_t *previous);

#endif
