// Loads a PKCS#11 module (see CPKCS11.h). By the absolute path the caller gives, never a bare name: the module
// is the user's choice, and a name would be searched for in places nobody chose.
#include "CPKCS11.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

void *keystore_pkcs11_open(const char *path, char *error, size_t errorSize) {
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library && errorSize > 0) {
        const char *why = dlerror();
        snprintf(error, errorSize, "%s", why ? why : "dlopen failed");
    }
    return library;
}

keystore_pkcs11_entry keystore_pkcs11_functions(void *library, CK_FUNCTION_LIST_PTR *list, CK_RV *rv) {
    *list = NULL;
    CK_C_GetInterface getInterface = (CK_C_GetInterface)dlsym(library, "C_GetInterface");
    if (getInterface) {
        // Section 5.4: the name and version asked for; flags 0, no particular interface flag required.
        CK_VERSION version = {3, 0};
        CK_INTERFACE_PTR interface = NULL;
        *rv = getInterface((CK_UTF8CHAR_PTR) "PKCS 11", &version, &interface, 0);
        if (*rv == CKR_OK && interface && interface->pFunctionList) {
            *list = (CK_FUNCTION_LIST_PTR)interface->pFunctionList;
            return KEYSTORE_PKCS11_CALLED;
        }
        // A module with C_GetInterface but without version 3.0 of "PKCS 11" (a 3.1-only one, say) still has
        // C_GetFunctionList, which every version keeps.
    }
    CK_C_GetFunctionList getFunctionList = (CK_C_GetFunctionList)dlsym(library, "C_GetFunctionList");
    if (!getFunctionList) return KEYSTORE_PKCS11_NO_ENTRY_POINT;
    *rv = getFunctionList(list);
    if (*rv == CKR_OK && !*list) *rv = CKR_GENERAL_ERROR;
    return KEYSTORE_PKCS11_CALLED;
}

const char *keystore_pkcs11_rv_name(CK_RV rv) {
    // The names are the macros' own, so a name cannot drift from its value.
#define NAME(constant) \
    case constant: return #constant;
    switch (rv) {
        NAME(CKR_OK)
        NAME(CKR_CANCEL)
        NAME(CKR_HOST_MEMORY)
        NAME(CKR_SLOT_ID_INVALID)
        NAME(CKR_GENERAL_ERROR)
        NAME(CKR_FUNCTION_FAILED)
        NAME(CKR_ARGUMENTS_BAD)
        NAME(CKR_NO_EVENT)
        NAME(CKR_NEED_TO_CREATE_THREADS)
        NAME(CKR_CANT_LOCK)
        NAME(CKR_ATTRIBUTE_READ_ONLY)
        NAME(CKR_ATTRIBUTE_SENSITIVE)
        NAME(CKR_ATTRIBUTE_TYPE_INVALID)
        NAME(CKR_ATTRIBUTE_VALUE_INVALID)
        NAME(CKR_ACTION_PROHIBITED)
        NAME(CKR_DATA_INVALID)
        NAME(CKR_DATA_LEN_RANGE)
        NAME(CKR_DEVICE_ERROR)
        NAME(CKR_DEVICE_MEMORY)
        NAME(CKR_DEVICE_REMOVED)
        NAME(CKR_FUNCTION_CANCELED)
        NAME(CKR_FUNCTION_NOT_SUPPORTED)
        NAME(CKR_KEY_HANDLE_INVALID)
        NAME(CKR_KEY_TYPE_INCONSISTENT)
        NAME(CKR_KEY_FUNCTION_NOT_PERMITTED)
        NAME(CKR_MECHANISM_INVALID)
        NAME(CKR_MECHANISM_PARAM_INVALID)
        NAME(CKR_OBJECT_HANDLE_INVALID)
        NAME(CKR_OPERATION_ACTIVE)
        NAME(CKR_OPERATION_NOT_INITIALIZED)
        NAME(CKR_PIN_INCORRECT)
        NAME(CKR_PIN_INVALID)
        NAME(CKR_PIN_LEN_RANGE)
        NAME(CKR_PIN_EXPIRED)
        NAME(CKR_PIN_LOCKED)
        NAME(CKR_SESSION_CLOSED)
        NAME(CKR_SESSION_COUNT)
        NAME(CKR_SESSION_HANDLE_INVALID)
        NAME(CKR_SESSION_READ_ONLY)
        NAME(CKR_SESSION_EXISTS)
        NAME(CKR_TEMPLATE_INCOMPLETE)
        NAME(CKR_TEMPLATE_INCONSISTENT)
        NAME(CKR_TOKEN_NOT_PRESENT)
        NAME(CKR_TOKEN_NOT_RECOGNIZED)
        NAME(CKR_TOKEN_WRITE_PROTECTED)
        NAME(CKR_USER_ALREADY_LOGGED_IN)
        NAME(CKR_USER_NOT_LOGGED_IN)
        NAME(CKR_USER_PIN_NOT_INITIALIZED)
        NAME(CKR_USER_TYPE_INVALID)
        NAME(CKR_USER_ANOTHER_ALREADY_LOGGED_IN)
        NAME(CKR_USER_TOO_MANY_TYPES)
        NAME(CKR_DOMAIN_PARAMS_INVALID)
        NAME(CKR_CURVE_NOT_SUPPORTED)
        NAME(CKR_BUFFER_TOO_SMALL)
        NAME(CKR_CRYPTOKI_NOT_INITIALIZED)
        NAME(CKR_CRYPTOKI_ALREADY_INITIALIZED)
        NAME(CKR_FUNCTION_REJECTED)
        NAME(CKR_TOKEN_RESOURCE_EXCEEDED)
        NAME(CKR_OPERATION_CANCEL_FAILED)
        default: return NULL;
    }
#undef NAME
}
