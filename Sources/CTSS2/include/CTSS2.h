#ifndef KEYSTORE_CTSS2_H
#define KEYSTORE_CTSS2_H
/// tpm2-tss for keystore's TPM target: its types and constants from its own headers, and its functions looked
/// up in its shared libraries at run time (tss2.c), as systemd does. A keystore binary carries no link to
/// tpm2-tss (nor to libcrypto, which tpm2-tss loads): it starts, and signs with a session, on a machine without
/// them, and only a TPM command needs them.

#include <stddef.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>

/// The functions keystore calls, with the very types the headers declare them with.
typedef struct {
    __typeof__(Esys_Initialize) *Esys_Initialize;
    __typeof__(Esys_Finalize) *Esys_Finalize;
    __typeof__(Esys_FlushContext) *Esys_FlushContext;
    __typeof__(Esys_Free) *Esys_Free;
    __typeof__(Esys_CreatePrimary) *Esys_CreatePrimary;
    __typeof__(Esys_Create) *Esys_Create;
    __typeof__(Esys_Load) *Esys_Load;
    __typeof__(Esys_Unseal) *Esys_Unseal;
    __typeof__(Esys_Sign) *Esys_Sign;
    __typeof__(Esys_TR_GetName) *Esys_TR_GetName;
    __typeof__(Esys_TR_SetAuth) *Esys_TR_SetAuth;
    __typeof__(Esys_StartAuthSession) *Esys_StartAuthSession;
    __typeof__(Esys_TRSess_SetAttributes) *Esys_TRSess_SetAttributes;
    __typeof__(Esys_GetCapability) *Esys_GetCapability;
    __typeof__(Esys_HierarchyChangeAuth) *Esys_HierarchyChangeAuth;
    __typeof__(Esys_DictionaryAttackLockReset) *Esys_DictionaryAttackLockReset;
    __typeof__(Esys_ReadPublic) *Esys_ReadPublic;
    __typeof__(Esys_LoadExternal) *Esys_LoadExternal;
    __typeof__(Esys_PolicyCommandCode) *Esys_PolicyCommandCode;
    __typeof__(Esys_Duplicate) *Esys_Duplicate;
    __typeof__(Esys_Import) *Esys_Import;
    __typeof__(Tss2_TctiLdr_Initialize) *Tss2_TctiLdr_Initialize;
    __typeof__(Tss2_TctiLdr_Finalize) *Tss2_TctiLdr_Finalize;
    __typeof__(Tss2_MU_TPM2B_PUBLIC_Marshal) *Tss2_MU_TPM2B_PUBLIC_Marshal;
    __typeof__(Tss2_MU_TPM2B_PUBLIC_Unmarshal) *Tss2_MU_TPM2B_PUBLIC_Unmarshal;
    __typeof__(Tss2_MU_TPM2B_PRIVATE_Marshal) *Tss2_MU_TPM2B_PRIVATE_Marshal;
    __typeof__(Tss2_MU_TPM2B_PRIVATE_Unmarshal) *Tss2_MU_TPM2B_PRIVATE_Unmarshal;
    __typeof__(Tss2_MU_TPM2B_ENCRYPTED_SECRET_Marshal) *Tss2_MU_TPM2B_ENCRYPTED_SECRET_Marshal;
    __typeof__(Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal) *Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal;
    __typeof__(Tss2_RC_Decode) *Tss2_RC_Decode;
} keystore_tss2;

/// The functions, loaded on first use (once, thread-safely) from libtss2-esys.so.0, libtss2-tctildr.so.0,
/// libtss2-mu.so.0 and libtss2-rc.so.0. NULL when a library or a function is missing; `keystore_tss2_error`
/// then says which, in one line.
const keystore_tss2 *keystore_tss2_load(void);
const char *keystore_tss2_error(void);

// The constants keystore uses. tpm2-tss defines them as cast macros, which Swift cannot import; these are the
// same values, typed, taken from the headers rather than typed again.
static const TPM2_ALG_ID KEYSTORE_TPM2_ALG_AES = TPM2_ALG_AES;
static const TPM2_ALG_ID KEYSTORE_TPM2_ALG_KEYEDHASH = TPM2_ALG_KEYEDHASH;
static const TPM2_ALG_ID KEYSTORE_TPM2_ALG_SHA256 = TPM2_ALG_SHA256;
static const TPM2_ALG_ID KEYSTORE_TPM2_ALG_NULL = TPM2_ALG_NULL;
static const TPM2_ALG_ID KEYSTORE_TPM2_ALG_ECC = TPM2_ALG_ECC;
static const TPM2_ALG_ID KEYSTORE_TPM2_ALG_CFB = TPM2_ALG_CFB;
static const TPM2_ALG_ID KEYSTORE_TPM2_ALG_ECDSA = TPM2_ALG_ECDSA;
static const TPM2_ECC_CURVE KEYSTORE_TPM2_ECC_NIST_P256 = TPM2_ECC_NIST_P256;
static const TPM2_SE KEYSTORE_TPM2_SE_HMAC = TPM2_SE_HMAC;
static const TPMA_SESSION KEYSTORE_TPMA_SESSION_CONTINUESESSION = TPMA_SESSION_CONTINUESESSION;
static const TPMA_SESSION KEYSTORE_TPMA_SESSION_DECRYPT = TPMA_SESSION_DECRYPT;
static const TPMA_SESSION KEYSTORE_TPMA_SESSION_ENCRYPT = TPMA_SESSION_ENCRYPT;
static const TPMA_OBJECT KEYSTORE_TPMA_OBJECT_FIXEDTPM = TPMA_OBJECT_FIXEDTPM;
static const TPMA_OBJECT KEYSTORE_TPMA_OBJECT_FIXEDPARENT = TPMA_OBJECT_FIXEDPARENT;
static const TPMA_OBJECT KEYSTORE_TPMA_OBJECT_SENSITIVEDATAORIGIN = TPMA_OBJECT_SENSITIVEDATAORIGIN;
static const TPMA_OBJECT KEYSTORE_TPMA_OBJECT_USERWITHAUTH = TPMA_OBJECT_USERWITHAUTH;
static const TPMA_OBJECT KEYSTORE_TPMA_OBJECT_NODA = TPMA_OBJECT_NODA;
static const TPMA_OBJECT KEYSTORE_TPMA_OBJECT_RESTRICTED = TPMA_OBJECT_RESTRICTED;
static const TPMA_OBJECT KEYSTORE_TPMA_OBJECT_DECRYPT = TPMA_OBJECT_DECRYPT;
static const TPMA_OBJECT KEYSTORE_TPMA_OBJECT_SIGN_ENCRYPT = TPMA_OBJECT_SIGN_ENCRYPT;
static const TPM2_ST KEYSTORE_TPM2_ST_HASHCHECK = TPM2_ST_HASHCHECK;
static const TPMI_RH_HIERARCHY KEYSTORE_TPM2_RH_NULL = TPM2_RH_NULL;
static const TPM2_CAP KEYSTORE_TPM2_CAP_TPM_PROPERTIES = TPM2_CAP_TPM_PROPERTIES;
static const TPM2_PT KEYSTORE_TPM2_PT_PERMANENT = TPM2_PT_PERMANENT;
static const TPM2_PT KEYSTORE_TPM2_PT_LOCKOUT_COUNTER = TPM2_PT_LOCKOUT_COUNTER;
static const TPM2_PT KEYSTORE_TPM2_PT_MAX_AUTH_FAIL = TPM2_PT_MAX_AUTH_FAIL;
static const TPM2_PT KEYSTORE_TPM2_PT_LOCKOUT_INTERVAL = TPM2_PT_LOCKOUT_INTERVAL;
static const TPM2_PT KEYSTORE_TPM2_PT_LOCKOUT_RECOVERY = TPM2_PT_LOCKOUT_RECOVERY;
static const TPMA_PERMANENT KEYSTORE_TPMA_PERMANENT_INLOCKOUT = TPMA_PERMANENT_INLOCKOUT;
static const TPMA_PERMANENT KEYSTORE_TPMA_PERMANENT_LOCKOUTAUTHSET = TPMA_PERMANENT_LOCKOUTAUTHSET;
static const TSS2_RC KEYSTORE_TPM2_RC_OBJECT_MEMORY = TPM2_RC_OBJECT_MEMORY;
static const TSS2_RC KEYSTORE_TPM2_RC_LOCKOUT = TPM2_RC_LOCKOUT;
static const TSS2_RC KEYSTORE_TPM2_RC_AUTH_FAIL = TPM2_RC_AUTH_FAIL;
static const TSS2_RC KEYSTORE_TPM2_RC_BAD_AUTH = TPM2_RC_BAD_AUTH;
static const TSS2_RC KEYSTORE_TPM2_RC_INTEGRITY = TPM2_RC_INTEGRITY;
static const TSS2_RC KEYSTORE_TPM2_RC_FMT1 = TPM2_RC_FMT1;
static const TSS2_RC KEYSTORE_TSS2_RC_LAYER_MASK = TSS2_RC_LAYER_MASK;
static const TSS2_RC KEYSTORE_TSS2_TCTI_RC_LAYER = TSS2_TCTI_RC_LAYER;
static const ESYS_TR KEYSTORE_ESYS_TR_NONE = ESYS_TR_NONE;
static const ESYS_TR KEYSTORE_ESYS_TR_PASSWORD = ESYS_TR_PASSWORD;
static const ESYS_TR KEYSTORE_ESYS_TR_RH_OWNER = ESYS_TR_RH_OWNER;
static const ESYS_TR KEYSTORE_ESYS_TR_RH_NULL = ESYS_TR_RH_NULL;
static const TPM2_SE KEYSTORE_TPM2_SE_POLICY = TPM2_SE_POLICY;
static const TPM2_CC KEYSTORE_TPM2_CC_DUPLICATE = TPM2_CC_Duplicate;
static const ESYS_TR KEYSTORE_ESYS_TR_RH_LOCKOUT = ESYS_TR_RH_LOCKOUT;

#endif
