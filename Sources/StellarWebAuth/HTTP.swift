internal import CCurl
import StellarKeys

/// The one file that calls libcurl (loaded at run time, see CCurl.h). A request is a plain GET or a JSON POST
/// (or a form POST) with a time limit and a size cap, over HTTPS with the certificate and host name checked by the TLS library
/// (plain HTTP is for loopback only, which `WebAddress` decides before anything is sent), and never follows a
/// redirect itself: the caller sees it and decides.
struct HTTP {
    struct Response {
        var status: Int
        var body: [UInt8]
        /// Where a 3xx answer points, resolved against the request's URL.
        var location: String?
    }

    /// The whole exchange, connection included.
    var timeoutSeconds = 15
    /// The most a response body may hold; a larger one is an error, not truncated.
    var limit = 256 << 10

    func get(_ url: WebAddress) throws -> Response {
        try perform(url, post: nil)
    }

    func post(_ url: WebAddress, json: [UInt8]) throws -> Response {
        try perform(url, post: json)
    }

    /// An HTML form's POST (`application/x-www-form-urlencoded`), as SEP-7 sends a signed envelope to a callback.
    func post(_ url: WebAddress, form: [UInt8]) throws -> Response {
        try perform(url, post: form, contentType: "application/x-www-form-urlencoded")
    }

    private final class Sink {
        var bytes: [UInt8] = []
        var limit: Int
        var overflowed = false
        init(limit: Int) { self.limit = limit }
    }

    private func perform(_ url: WebAddress, post body: [UInt8]?, contentType: String = "application/json") throws -> Response {
        guard let curl = keystore_curl_load() else {
            throw WebAuthClientError.httpUnavailable(keystore_curl_error().map { String(cString: $0) } ?? "libcurl could not be loaded")
        }
        guard let handle = curl.pointee.curl_easy_init() else { throw WebAuthClientError.httpUnavailable("libcurl could not start a request") }
        defer { curl.pointee.curl_easy_cleanup(handle) }
        var headers: UnsafeMutablePointer<curl_slist>?
        defer { curl.pointee.curl_slist_free_all(headers) }
        headers = curl.pointee.curl_slist_append(headers, "Accept: application/json, application/toml, text/plain")
        let sink = Sink(limit: limit)
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var code: CURLcode = CURLE_OK
        func set(_ result: CURLcode) { if code == CURLE_OK { code = result } }
        set(keystore_curl_set_string(handle, CURLOPT_URL, url.text))
        set(keystore_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(keystore_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        set(keystore_curl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        set(keystore_curl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        set(keystore_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
        set(keystore_curl_set_long(handle, CURLOPT_TIMEOUT, timeoutSeconds))
        set(keystore_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, timeoutSeconds))
        set(keystore_curl_set_long(handle, CURLOPT_MAXFILESIZE, limit))
        set(keystore_curl_set_string(handle, CURLOPT_USERAGENT, "keystore"))
        // This machine is never reached through a proxy set in the environment; anything else is, as libcurl does.
        if WebAddress.isLoopback(url.host) { set(keystore_curl_set_string(handle, CURLOPT_PROXY, "")) }
        if let body {
            headers = curl.pointee.curl_slist_append(headers, "Content-Type: " + contentType)
            set(keystore_curl_set_long(handle, CURLOPT_POST, 1))
            set(keystore_curl_set_long(handle, CURLOPT_POSTFIELDSIZE, body.count))
            // COPYPOSTFIELDS: libcurl keeps its own copy, so nothing here must outlive the call.
            set(body.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { keystore_curl_set_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress)) }
            })
        }
        set(keystore_curl_set_pointer(handle, CURLOPT_HTTPHEADER, headers))
        let context = Unmanaged.passUnretained(sink).toOpaque()
        set(keystore_curl_set_write(handle, { data, size, count, context in
            let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            guard sink.bytes.count + length <= sink.limit else {
                sink.overflowed = true
                return 0
            }
            data.map { sink.bytes += UnsafeRawBufferPointer(start: $0, count: length) }
            return length
        }, context))
        guard code == CURLE_OK else { throw WebAuthClientError.httpUnavailable("libcurl refused an option: \(Self.describe(code, curl))") }
        let result = errorBuffer.withUnsafeMutableBufferPointer { buffer in
            _ = keystore_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, buffer.baseAddress)
            let result = curl.pointee.curl_easy_perform(handle)
            _ = keystore_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, nil)
            return result
        }
        if sink.overflowed || result == CURLE_FILESIZE_EXCEEDED {
            throw WebAuthClientError.responseTooLarge(url: url.text, limit: limit)
        }
        guard result == CURLE_OK else {
            let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let reason = detail.isEmpty ? Self.describe(result, curl) : detail
            if result == CURLE_OPERATION_TIMEDOUT { throw WebAuthClientError.timedOut(url: url.text, seconds: timeoutSeconds) }
            throw WebAuthClientError.unreachable(url: url.text, reason: reason)
        }
        var status = 0
        _ = keystore_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var location: UnsafeMutablePointer<CChar>?
        _ = keystore_curl_get_string(handle, CURLINFO_REDIRECT_URL, &location)
        return Response(status: status, body: sink.bytes, location: location.map { String(cString: $0) })
    }

    private static func describe(_ code: CURLcode, _ curl: UnsafePointer<keystore_curl>) -> String {
        curl.pointee.curl_easy_strerror(code).map { String(cString: $0) } ?? "libcurl error \(code.rawValue)"
    }

    /// `text` percent-encoded for a query string: every byte but RFC 3986's unreserved ones.
    static func escaped(_ text: String) -> String {
        text.utf8.map { byte in
            let unreserved = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
            return unreserved ? String(UnicodeScalar(byte)) : "%" + Hex.string([byte]).uppercased()
        }.joined()
    }
}
