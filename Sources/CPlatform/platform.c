#include "CPlatform.h"
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

#if defined(__linux__)
// The toolchain's ICU (lib_FoundationICU) renames its entry points with a swift_ prefix; its headers are not
// installed as a module, so the two functions used are declared here with ICU's C signatures.
typedef struct UNormalizer2 UNormalizer2;
typedef int UErrorCode;
const UNormalizer2 *swift_unorm2_getNFKDInstance(UErrorCode *error);
int32_t swift_unorm2_normalize(const UNormalizer2 *normalizer, const uint16_t *source, int32_t length,
                               uint16_t *destination, int32_t capacity, UErrorCode *error);

int32_t keystore_nfkd(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    UErrorCode error = 0;
    const UNormalizer2 *normalizer = swift_unorm2_getNFKDInstance(&error);
    if (error > 0 || normalizer == 0) return -1;
    int32_t written = swift_unorm2_normalize(normalizer, source, length, destination, capacity, &error);
    return error > 0 ? -1 : written;
}
#else
int32_t keystore_nfkd(const uint16_t *source, int32_t length, uint16_t *destination, int32_t capacity) {
    return -1;  // elsewhere Foundation normalises (see Mnemonic.swift)
}
#endif
