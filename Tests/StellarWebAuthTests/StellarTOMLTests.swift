import StellarWebAuth
import Testing

@Suite struct StellarTOMLTests {
    @Test func theRootStringsAreReadAndTheRestSkipped() throws {
        let toml = try StellarTOML(Array("""
            # SEP-1
            VERSION = "2.0.0"
            NETWORK_PASSPHRASE = "Test SDF Network ; September 2015"
            ACCOUNTS = [
              "GA...", # a comment
              'GB...',
            ]
            FEDERATION_SERVER="https://example.com/fed"
            WEB_AUTH_ENDPOINT = "https://auth.example.com/\\u00e9\\"x\\""
            MULTI = \"\"\"
            two \\
              lines\"\"\"
            LITERAL = 'C:\\path'
            inline = { a = 1, b = [2, 3] }
            SIGNING_KEY = "GBXHUHG5FGYLPD6RHL2MKWMP572O6KUXCZXDZJXS4T57ZTMAKBN7DWXN" # after the value
            DEBUG = true

            [DOCUMENTATION]
            SIGNING_KEY = "not the root's"
            """.utf8))
        #expect(toml.strings["NETWORK_PASSPHRASE"] == "Test SDF Network ; September 2015")
        #expect(toml.strings["WEB_AUTH_ENDPOINT"] == "https://auth.example.com/é\"x\"")
        #expect(toml.strings["SIGNING_KEY"] == "GBXHUHG5FGYLPD6RHL2MKWMP572O6KUXCZXDZJXS4T57ZTMAKBN7DWXN")
        #expect(toml.strings["MULTI"] == "two lines")
        #expect(toml.strings["LITERAL"] == "C:\\path")
        #expect(toml.strings["ACCOUNTS"] == nil && toml.strings["DEBUG"] == nil)
    }

    @Test(arguments: [
        ("SIGNING_KEY = \"a\"\nSIGNING_KEY = \"b\"", "given twice"),
        ("SIGNING_KEY = \"a", "not closed"),
        ("A = [1, 2", "not closed"),
        ("SIGNING_KEY = \"a\" \"b\"", "unexpected text"),
        ("SIGNING_KEY \"a\"", "expected '='"),
        ("A = \"\\q\"", "unknown escape"),
        ("A =", "no value"),
    ])
    func whatIsNotTOMLIsAnErrorNotAGuess(_ text: String, _ said: String) {
        #expect { try StellarTOML(Array(text.utf8)) } throws: { "\($0)".contains(said) }
    }

    /// TOML defines a key once, as a value or as a table (dotted keys and `[headers]` make tables): a key that is
    /// both is not TOML, and another reader could take either. In either order, and with a header after the root.
    @Test(arguments: [
        "SIGNING_KEY.x = 1\nSIGNING_KEY = \"GA\"",
        "SIGNING_KEY = \"GA\"\nSIGNING_KEY.x = 1",
        "SIGNING_KEY.x.y = 1\nSIGNING_KEY.x = \"GA\"",
        "\"SIGNING_KEY\".x = 1\nSIGNING_KEY = \"GA\"",
        "SIGNING_KEY = \"GA\"\n[SIGNING_KEY]\nx = 1",
        "SIGNING_KEY = \"GA\"\n[ SIGNING_KEY . x ]\ny = 1",
        "SIGNING_KEY = \"GA\"\n[[SIGNING_KEY]]\nx = 1",
        "SIGNING_KEY = \"GA\"\n[DOCUMENTATION]\nA = 1\n[SIGNING_KEY]",
        "SIGNING_KEY = { x = 1 }\n[SIGNING_KEY]",
        "A.b = 1\n[A]",
        "A.b.c = 1\n[A.b]",
        "A.b = 1\n[[A]]",
    ])
    func aKeyThatIsBothATableAndAValueIsAnError(_ text: String) {
        #expect(throws: WebAuthClientError.self, "\(text)") { try StellarTOML(Array(text.utf8)) }
    }

    /// What TOML allows around the same keys still reads: a table extended by dotted keys, a sub-table of one made
    /// by dotted keys, a quoted key holding a dot (one key, not a table), and a date-time written with a space.
    @Test func tablesThatDoNotCollideAreRead() throws {
        let toml = try StellarTOML(Array("""
            A.b = 1
            A.c = 2
            "SIGNING_KEY.x" = 3
            SIGNING_KEY = "GA"
            WHEN = 1979-05-27 07:32:00Z
            [A.d]
            x = 1
            [[CURRENCIES]]
            code = "USD"
            [[CURRENCIES]]
            code = "EUR"
            """.utf8))
        #expect(toml.strings == ["SIGNING_KEY": "GA"])
    }
}

@Suite struct WebAddressTests {
    @Test func httpsAnywhereAndHTTPOnlyToThisMachine() throws {
        #expect(try WebAddress(domainOrURL: "anchor.example").text == "https://anchor.example")
        #expect(try WebAddress("https://Anchor.Example:8443/auth").host == "anchor.example")
        for loopback in ["http://127.0.0.1:8000", "http://127.1.2.3", "http://localhost:1", "http://[::1]:80"] {
            #expect(throws: Never.self) { try WebAddress(loopback) }
        }
        #expect(try WebAddress("http://[::1]:80/x").host == "::1")
        for refused in ["http://anchor.example", "http://127.0.0.1.evil.example", "http://0x7f000001", "file:///etc/passwd",
                        "https://user:pw@anchor.example", "https://anchor.example/\u{7}"] {
            #expect(throws: WebAuthClientError.self, "\(refused)") { try WebAddress(refused) }
        }
        #expect(throws: WebAuthClientError.badDomain("exa_mple.com")) { try WebAddress(domainOrURL: "exa_mple.com") }
        #expect(try WebAddress("http://127.0.0.1:9/auth?x=1").stellarTOML.text == "http://127.0.0.1:9/.well-known/stellar.toml")
    }
}
