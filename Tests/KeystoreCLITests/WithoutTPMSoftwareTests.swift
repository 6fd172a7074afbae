import Foundation
import Testing
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

enum TPMSoftware {
    static let canBeHidden = geteuid() == 0 && ["/usr/bin/unshare", "/bin/unshare"].contains { (path: String) in access(path, X_OK) == 0 }

    /// The `(NEEDED)` lines of the keystore binary's dynamic section: the libraries the loader maps at start.
    static func neededLibraries() throws -> [Substring] {
        let elf = try KeystoreProcess(program: "readelf").run(["-d", KeystoreProcess.binary])
        try #require(elf.status == 0, "\(elf.stderr)")
        return elf.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
    }
}

/// keystore on a machine without tpm2-tss: it links none of it (nor libcrypto, which tpm2-tss loads), starts,
/// lists and signs with a session; only a TPM command needs it, and says in one line what is missing. The
/// libraries are hidden in a private mount namespace (each bound over by /dev/null), which takes root.
@Suite(.offThePool, .enabled(if: TPMSoftware.canBeHidden, "hiding libraries needs root and unshare(1)"))
struct WithoutTPMSoftwareTests {
    /// Runs the command with every tpm2-tss library unreadable as a library.
    static let hidden = ["unshare", "-m", "sh", "-c",
                         "for f in /usr/lib/*/libtss2-*.so* /lib/*/libtss2-*.so*; do [ -e \"$f\" ] && mount --bind /dev/null \"$f\"; done; exec \"$0\" \"$@\""]

    @Test func theBinaryLinksNoTPMSoftware() throws {
        let needed = try TPMSoftware.neededLibraries()
        #expect(!needed.isEmpty && !needed.contains { $0.contains("tss2") || $0.contains("libcrypto") }, "\(needed)")
    }

    @Test func itStartsListsAndSignsWithoutTPM2TSS() throws {
        let home = try KeystoreHome()
        try home.addGolden()
        let keystore = try home.keystoreWithRuntime()
        // The libraries really are hidden: tpm2-tools' own tool cannot start.
        let tool = try KeystoreProcess(program: "tpm2_dictionarylockout").run(["--help"], prefix: Self.hidden)
        #expect(tool.status != 0 && tool.stderr.contains("tss2"), "\(tool.stderr)")
        let login = try keystore.run(["login", "--session", "--name", KeystoreHome.golden.name, "--pin-stdin"],
                                     stdin: Array((KeystoreHome.golden.pin + "\n").utf8), prefix: Self.hidden)
        try #require(login.status == 0, "\(login.stderr)")
        var signing = keystore
        signing.environment["KEYSTORE_SESSION"] = String(login.stdout.dropFirst("export KEYSTORE_SESSION=".count)).trimmingCharacters(in: .newlines)
        defer { _ = try? signing.run(["logout"]) }
        #expect(try keystore.run(["--version"], prefix: Self.hidden).status == 0)
        let list = try keystore.run(["list"], prefix: Self.hidden)
        #expect(list.status == 0 && list.stdout.hasPrefix(KeystoreHome.golden.name + "\t"), "\(list.stderr)")
        let signed = try signing.run(["sign", "--hex", "c0ffee"], prefix: Self.hidden)
        #expect(signed.status == 0, "\(signed.stderr)")
        let verify = try keystore.run(["verify", "--raw", "--address", KeystoreHome.golden.address, "--signature",
                                       signed.stdout.trimmingCharacters(in: .newlines), "--hex", "c0ffee"], prefix: Self.hidden)
        #expect(verify.status == 0, "\(verify.stderr)")
        // A TPM command says what is missing, in one line.
        let status = try keystore.run(["tpm-status"], prefix: Self.hidden)
        #expect(status.status == 8 && status.stderrLines.count == 1, "\(status.stderr)")
        #expect(status.stderr.contains("The TPM software is missing: tpm2-tss could not be loaded") && status.stderr.contains("Install tpm2-tss"),
                "\(status.stderr)")
    }
}

/// keystore without libcurl: nothing but `web-auth` notices, and it says in one line what is missing.
@Suite(.offThePool, .enabled(if: TPMSoftware.canBeHidden, "hiding libraries needs root and unshare(1)"))
struct WithoutLibcurlTests {
    static let hidden = ["unshare", "-m", "sh", "-c",
                         "for f in /usr/lib/*/libcurl*.so* /lib/*/libcurl*.so*; do [ -e \"$f\" ] && mount --bind /dev/null \"$f\"; done; exec \"$0\" \"$@\""]

    @Test func theBinaryLinksNoLibcurl() throws {
        let needed = try TPMSoftware.neededLibraries()
        #expect(!needed.isEmpty && !needed.contains { $0.contains("curl") || $0.contains("libssl") }, "\(needed)")
    }

    @Test func onlyWebAuthNeedsIt() throws {
        let home = try KeystoreHome()
        try home.addGolden()
        let signed = try home.keystore.run(["sign", "--name", KeystoreHome.golden.name, "--pin-stdin", "--hex", "c0ffee"],
                                           stdin: Array((KeystoreHome.golden.pin + "\n").utf8), prefix: Self.hidden)
        #expect(signed.status == 0, "\(signed.stderr)")
        let webAuth = try home.keystore.run(["web-auth", "http://127.0.0.1:1", "--name", KeystoreHome.golden.name], prefix: Self.hidden)
        #expect(webAuth.status == 8 && webAuth.stderrLines.count == 1, "\(webAuth.stderr)")
        #expect(webAuth.stderr.contains("HTTP is not available: libcurl could not be loaded") && webAuth.stderr.contains("Install libcurl"), "\(webAuth.stderr)")
    }
}
