// Loads libcurl at run time (see CCurl.h), by its SONAME, RTLD_LOCAL.
#include "CCurl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static keystore_curl functions;
static const keystore_curl *loaded;
static char error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define LOOK_UP(library, name)                                                                                  \
    do {                                                                                                        \
        functions.name = (__typeof__(functions.name))(library ? dlsym(library, #name) : NULL);                  \
        if (!functions.name && !error[0]) snprintf(error, sizeof error, "libcurl lacks the function %s", #name); \
    } while (0)

static void load(void) {
    // A bare soname is looked up in LD_LIBRARY_PATH, this executable's RUNPATH, ld.so.cache and the default
    // directories; its constructor runs on load. The installed build has no RUNPATH (docs/guides/building.md: --disable-local-rpath),
    // so a libcurl.so.4 planted beside the binary is never the one loaded.
    void *curl = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!curl) {
        const char *why = dlerror();
        snprintf(error, sizeof error, "libcurl could not be loaded: %s", why ? why : "libcurl.so.4");
    }
    LOOK_UP(curl, curl_easy_init);
    LOOK_UP(curl, curl_easy_cleanup);
    LOOK_UP(curl, curl_easy_perform);
    LOOK_UP(curl, curl_easy_strerror);
    LOOK_UP(curl, curl_slist_append);
    LOOK_UP(curl, curl_slist_free_all);
    LOOK_UP(curl, curl_easy_setopt);
    LOOK_UP(curl, curl_easy_getinfo);
    if (!error[0]) loaded = &functions;
}

const keystore_curl *keystore_curl_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *keystore_curl_error(void) {
    pthread_once(&once, load);
    return error[0] ? error : NULL;
}

CURLcode keystore_curl_set_long(CURL *handle, CURLoption option, long value) {
    return functions.curl_easy_setopt(handle, option, value);
}

CURLcode keystore_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return functions.curl_easy_setopt(handle, option, value);
}

CURLcode keystore_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return functions.curl_easy_setopt(handle, option, value);
}

CURLcode keystore_curl_set_write(CURL *handle, keystore_curl_write_callback callback, void *context) {
    CURLcode code = functions.curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
    return code != CURLE_OK ? code : functions.curl_easy_setopt(handle, CURLOPT_WRITEDATA, context);
}

CURLcode keystore_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return functions.curl_easy_getinfo(handle, info, value);
}

CURLcode keystore_curl_get_string(CURL *handle, CURLINFO info, char **value) {
    return functions.curl_easy_getinfo(handle, info, value);
}
