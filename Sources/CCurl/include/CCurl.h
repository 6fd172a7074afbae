#ifndef KEYSTORE_CCURL_H
#define KEYSTORE_CCURL_H
/// libcurl for keystore's web sign-in: its types and constants from its own headers, and its functions looked
/// up in libcurl.so.4 at run time (curl.c), as tpm2-tss is. A keystore binary carries no link to libcurl, nor to
/// the TLS library under it: every other command starts as if it did not exist, and only `web-auth` needs it.

#include <stddef.h>
#include <curl/curl.h>

typedef struct {
    __typeof__(curl_easy_init) *curl_easy_init;
    __typeof__(curl_easy_cleanup) *curl_easy_cleanup;
    __typeof__(curl_easy_perform) *curl_easy_perform;
    __typeof__(curl_easy_strerror) *curl_easy_strerror;
    __typeof__(curl_slist_append) *curl_slist_append;
    __typeof__(curl_slist_free_all) *curl_slist_free_all;
    __typeof__(curl_easy_setopt) *curl_easy_setopt;
    __typeof__(curl_easy_getinfo) *curl_easy_getinfo;
} keystore_curl;

/// The functions, loaded on first use (once, thread-safely). NULL when the library or a function is missing;
/// `keystore_curl_error` then says which, in one line.
const keystore_curl *keystore_curl_load(void);
const char *keystore_curl_error(void);

/// Typed forms of the variadic setopt and getinfo, which Swift cannot call.
typedef size_t (*keystore_curl_write_callback)(char *data, size_t size, size_t count, void *context);
CURLcode keystore_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode keystore_curl_set_string(CURL *handle, CURLoption option, const char *value);
CURLcode keystore_curl_set_pointer(CURL *handle, CURLoption option, void *value);
CURLcode keystore_curl_set_write(CURL *handle, keystore_curl_write_callback callback, void *context);
CURLcode keystore_curl_get_long(CURL *handle, CURLINFO info, long *value);
CURLcode keystore_curl_get_string(CURL *handle, CURLINFO info, char **value);

#endif
