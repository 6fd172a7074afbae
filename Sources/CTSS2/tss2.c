// Loads tpm2-tss at run time (see CTSS2.h). Each library by its SONAME, so that the ABI is the one the
// headers describe; RTLD_LOCAL, so that nothing of it leaks into the global namespace.
#include "CTSS2.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static keystore_tss2 functions;
static const keystore_tss2 *loaded;
static char error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *open_library(const char *name) {
    // Searched as CCurl's libcurl is (see curl.c): never beside an installed binary, which has no RUNPATH.
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library && !error[0]) {
        const char *why = dlerror();
        snprintf(error, sizeof error, "tpm2-tss could not be loaded: %s", why ? why : name);
    }
    return library;
}

#define LOOK_UP(library, name)                                                                                   \
    do {                                                                                                         \
        functions.name = (__typeof__(functions.name))(library ? dlsym(library, #name) : NULL);                   \
        if (!functions.name && !error[0]) snprintf(error, sizeof error, "tpm2-tss lacks the function %s", #name); \
    } while (0)

static void load(void) {
    void *esys = open_library("libtss2-esys.so.0");
    void *tctildr = open_library("libtss2-tctildr.so.0");
    void *mu = open_library("libtss2-mu.so.0");
    void *rc = open_library("libtss2-rc.so.0");
    LOOK_UP(esys, Esys_Initialize);
    LOOK_UP(esys, Esys_Finalize);
    LOOK_UP(esys, Esys_FlushContext);
    LOOK_UP(esys, Esys_Free);
    LOOK_UP(esys, Esys_CreatePrimary);
    LOOK_UP(esys, Esys_Create);
    LOOK_UP(esys, Esys_Load);
    LOOK_UP(esys, Esys_Unseal);
    LOOK_UP(esys, Esys_Sign);
    LOOK_UP(esys, Esys_TR_GetName);
    LOOK_UP(esys, Esys_TR_SetAuth);
    LOOK_UP(esys, Esys_StartAuthSession);
    LOOK_UP(esys, Esys_TRSess_SetAttributes);
    LOOK_UP(esys, Esys_GetCapability);
    LOOK_UP(esys, Esys_HierarchyChangeAuth);
    LOOK_UP(esys, Esys_DictionaryAttackLockReset);
    LOOK_UP(esys, Esys_ReadPublic);
    LOOK_UP(esys, Esys_LoadExternal);
    LOOK_UP(esys, Esys_PolicyCommandCode);
    LOOK_UP(esys, Esys_Duplicate);
    LOOK_UP(esys, Esys_Import);
    LOOK_UP(tctildr, Tss2_TctiLdr_Initialize);
    LOOK_UP(tctildr, Tss2_TctiLdr_Finalize);
    LOOK_UP(mu, Tss2_MU_TPM2B_PUBLIC_Marshal);
    LOOK_UP(mu, Tss2_MU_TPM2B_PUBLIC_Unmarshal);
    LOOK_UP(mu, Tss2_MU_TPM2B_PRIVATE_Marshal);
    LOOK_UP(mu, Tss2_MU_TPM2B_PRIVATE_Unmarshal);
    LOOK_UP(mu, Tss2_MU_TPM2B_ENCRYPTED_SECRET_Marshal);
    LOOK_UP(mu, Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal);
    LOOK_UP(rc, Tss2_RC_Decode);
    if (!error[0]) loaded = &functions;
}

const keystore_tss2 *keystore_tss2_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *keystore_tss2_error(void) {
    pthread_once(&once, load);
    return error[0] ? error : NULL;
}
