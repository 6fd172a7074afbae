#ifndef C_PLATFORM_H
#define C_PLATFORM_H
#include <stdint.h>

/// The few system calls Swift cannot make directly (variadic C, or a library without a module).

/// NFKD of UTF-16 `source` into `destination`; returns the length written, or -1 on error (including a
/// destination too small). Backed by the ICU that ships inside the Swift toolchain on Linux, so that BIP39
/// normalisation does not pull all of Foundation (and a millisecond of start-up) into every keystore run.
int32_t keystore_nfkd(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity);

/// Keeps secrets out of core dumps and away from debuggers of the same user: RLIMIT_CORE 0 and, on Linux,
/// PR_SET_DUMPABLE 0 (as ssh-agent and gpg-agent do). Returns 0, or -1 if either call failed.
int keystore_disable_core_dumps(void);

#endif
