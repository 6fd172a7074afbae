// Loads a PKCS#11 module (see CPKCS11.h). By the absolute path the caller gives, never a bare name: the module
// is the user's choice, and a name would be searched for in places nobody chose. The file is opened and checked
// here first (keystore_pkcs11_open_module), and loaded through its descriptor.
#define _GNU_SOURCE  // O_PATH
#include "CPKCS11.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

// MARK: - Opening a module's file

/// Deeper than this is not a path to a module.
#define KEYSTORE_MODULE_DEPTH 256
/// The kernel's own limit on links followed in one lookup (path_resolution(7)).
#define KEYSTORE_MODULE_LINKS 40

static int keystore_owned_well(const struct stat *status, uid_t user) {
    return status->st_uid == 0 || status->st_uid == user;
}

keystore_module_check keystore_pkcs11_open_module(const char *path, unsigned int user, int *module, char *resolved,
                                                  size_t resolvedSize, char *where, size_t whereSize, int *errorNumber) {
    *module = -1;
    *errorNumber = 0;
    if (resolvedSize > 0) resolved[0] = 0;
    if (whereSize > 0) where[0] = 0;
    if (path[0] != '/') return KEYSTORE_MODULE_NOT_ABSOLUTE;

    // `pending` is what is left to walk from `current`, the directory reached (its path, "" for the root, and its
    // descriptor on top of `directories`).
    char pending[PATH_MAX], current[PATH_MAX] = "", candidate[PATH_MAX] = "/";
    size_t length = strlen(path), position = 0, depth = 0;
    if (length >= sizeof pending) return KEYSTORE_MODULE_TOO_LONG;
    memcpy(pending, path, length + 1);
    int directories[KEYSTORE_MODULE_DEPTH];
    size_t lengths[KEYSTORE_MODULE_DEPTH];
    int links = 0, entry = -1;
    struct stat status;
    keystore_module_check result;

#define FAIL(code) do { result = (code); goto done; } while (0)
#define FAIL_ERRNO() do { *errorNumber = errno; FAIL(KEYSTORE_MODULE_CANNOT_OPEN); } while (0)

    directories[0] = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    lengths[0] = 0;
    if (directories[0] < 0) { *errorNumber = errno; snprintf(where, whereSize, "/"); return KEYSTORE_MODULE_CANNOT_OPEN; }
    if (fstat(directories[0], &status) != 0) FAIL_ERRNO();
    if (!keystore_owned_well(&status, user)) FAIL(KEYSTORE_MODULE_OTHER_OWNER);
    if ((status.st_mode & (S_IWGRP | S_IWOTH)) && !(status.st_mode & S_ISVTX)) FAIL(KEYSTORE_MODULE_WRITABLE);

    for (;;) {
        while (pending[position] == '/') position++;
        if (!pending[position]) {
            // The path ends at a directory.
            snprintf(candidate, sizeof candidate, "%s", depth ? current : "/");
            FAIL(KEYSTORE_MODULE_NOT_REGULAR);
        }
        size_t start = position;
        while (pending[position] && pending[position] != '/') position++;
        size_t nameLength = position - start;
        char name[NAME_MAX + 1];
        if (nameLength > NAME_MAX) FAIL(KEYSTORE_MODULE_TOO_LONG);
        memcpy(name, pending + start, nameLength);
        name[nameLength] = 0;
        size_t next = position;
        while (pending[next] == '/') next++;
        int last = pending[next] == 0;

        if (strcmp(name, ".") == 0) continue;
        if (strcmp(name, "..") == 0) {
            // Links are followed as they come, so ".." leaves the directory actually reached, as the kernel does.
            if (depth > 0) {
                close(directories[depth--]);
                current[lengths[depth]] = 0;
            }
            continue;
        }
        if (snprintf(candidate, sizeof candidate, "%s/%s", current, name) >= (int)sizeof candidate) FAIL(KEYSTORE_MODULE_TOO_LONG);
        entry = openat(directories[depth], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (entry < 0) FAIL_ERRNO();
        if (fstat(entry, &status) != 0) FAIL_ERRNO();
        if (!keystore_owned_well(&status, user)) FAIL(KEYSTORE_MODULE_OTHER_OWNER);

        if (S_ISLNK(status.st_mode)) {
            if (++links > KEYSTORE_MODULE_LINKS) FAIL(KEYSTORE_MODULE_TOO_MANY_LINKS);
            char target[PATH_MAX], rest[PATH_MAX];
            ssize_t read = readlinkat(entry, "", target, sizeof target);
            if (read < 0) FAIL_ERRNO();
            if ((size_t)read >= sizeof target) FAIL(KEYSTORE_MODULE_TOO_LONG);
            target[read] = 0;
            close(entry);
            entry = -1;
            // What follows the link's name starts with its "/", if anything follows.
            if (snprintf(rest, sizeof rest, "%s%s", target, pending + position) >= (int)sizeof rest) {
                FAIL(KEYSTORE_MODULE_TOO_LONG);
            }
            memcpy(pending, rest, strlen(rest) + 1);
            position = 0;
            if (target[0] == '/') {
                while (depth > 0) close(directories[depth--]);
                current[0] = 0;
            }
            continue;
        }
        if (S_ISDIR(status.st_mode)) {
            if ((status.st_mode & (S_IWGRP | S_IWOTH)) && !(status.st_mode & S_ISVTX)) FAIL(KEYSTORE_MODULE_WRITABLE);
            if (last) FAIL(KEYSTORE_MODULE_NOT_REGULAR);
            if (depth + 1 >= KEYSTORE_MODULE_DEPTH) FAIL(KEYSTORE_MODULE_TOO_LONG);
            directories[++depth] = entry;
            entry = -1;
            memcpy(current, candidate, strlen(candidate) + 1);
            lengths[depth] = strlen(current);
            continue;
        }
        if (!last) FAIL(KEYSTORE_MODULE_NOT_DIRECTORY);
        if (!S_ISREG(status.st_mode)) FAIL(KEYSTORE_MODULE_NOT_REGULAR);
        if (status.st_mode & (S_IWGRP | S_IWOTH)) FAIL(KEYSTORE_MODULE_WRITABLE);
        // Opened for reading only now that it is known to be a regular file; the entry may have been replaced
        // in between, so the file opened must be the one checked.
        int file = openat(directories[depth], name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (file < 0) FAIL_ERRNO();
        struct stat opened;
        if (fstat(file, &opened) != 0 || opened.st_dev != status.st_dev || opened.st_ino != status.st_ino) {
            close(file);
            FAIL(KEYSTORE_MODULE_CHANGED);
        }
        if (snprintf(resolved, resolvedSize, "%s", candidate) >= (int)resolvedSize) {
            close(file);
            FAIL(KEYSTORE_MODULE_TOO_LONG);
        }
        *module = file;
        result = KEYSTORE_MODULE_OPENED;
        goto done;
    }

done:
#undef FAIL
#undef FAIL_ERRNO
    if (entry >= 0) close(entry);
    for (size_t level = 0; level <= depth; level++) close(directories[level]);
    if (result != KEYSTORE_MODULE_OPENED) snprintf(where, whereSize, "%s", candidate);
    return result;
}
