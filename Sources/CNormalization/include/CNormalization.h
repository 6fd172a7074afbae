#ifndef C_NORMALIZATION_H
#define C_NORMALIZATION_H
#include <stdint.h>

/// NFKD of UTF-16 `source` into `destination`; returns the length written, or -1 on error (including a
/// destination too small). Backed by the ICU that ships inside the Swift toolchain on Linux, so that BIP39
/// normalisation does not pull all of Foundation (and a millisecond of start-up) into every keystore run.
int32_t keystore_nfkd(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity);

#endif
