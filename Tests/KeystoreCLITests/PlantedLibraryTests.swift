import Foundation
import Testing
import TestFixtures
#if canImport(Glibc)
import Glibc
#endif

/// libcurl and tpm2-tss are opened at run time by their sonames. A binary whose RUNPATH holds `$ORIGIN` (SwiftPM's
/// default) looks for them beside itself first, so a `libcurl.so.4` dropped there runs its constructor in
/// `web-auth`. The installed binary must look only where the system keeps its libraries (issue 28, item 7).
enum PlantedLibrary {
    /// Every soname CCurl and CTSS2 open.
    static let sonames = ["libcurl.so.4", "libtss2-esys.so.0", "libtss2-tctildr.so.0", "libtss2-mu.so.0", "libtss2-rc.so.0"]

    /// The RUNPATH and RPATH lines of `binary`'s dynamic section.
    static func searchPaths(of binary: String) throws -> [Substring] {
        let elf = try KeystoreProcess(program: "readelf").run(["-d", binary])
        try #require(elf.status == 0, "\(elf.stderr)")
        return elf.stdout.split(separator: "\n").filter { $0.contains("(RUNPATH)") || $0.contains("(RPATH)") }
    }

    /// Links (or copies) `binary` into a new directory beside a library under each of `sonames` whose constructor
    /// creates a marker file, runs `web-auth` and `tpm-status` there, and says whether any constructor ran.
    /// Everything it makes is removed before it returns.
    static func constructorRuns(beside binary: String) throws -> Bool {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("keystore-planted-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: work) }
        let bin = work + "/bin", marker = work + "/constructor-ran", home = work + "/home"
        for directory in [bin, home] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        let source = work + "/planted.c"
        try """
            #include <fcntl.h>
            #include <unistd.h>
            __attribute__((constructor)) static void planted(void) {
                int fd = open("\(marker)", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                if (fd >= 0) close(fd);
            }
            """.write(toFile: source, atomically: false, encoding: .utf8)
        let compiled = try KeystoreProcess(program: "cc").run(["-shared", "-fPIC", "-o", bin + "/" + sonames[0], source])
        try #require(compiled.status == 0, "\(compiled.stderr)")
        for soname in sonames.dropFirst() { try FileManager.default.copyItem(atPath: bin + "/" + sonames[0], toPath: bin + "/" + soname) }
        // A hard link keeps the test quick (a debug binary is large); $ORIGIN is the directory of the name run.
        let copy = bin + "/keystore"
        if link(binary, copy) != 0 { try FileManager.default.copyItem(atPath: binary, toPath: copy) }
        var keystore = KeystoreProcess(program: copy)
        keystore.environment["KEYSTORE_HOME"] = home
        keystore.environment["KEYSTORE_TPM_TCTI"] = nil
        keystore.environment["LD_LIBRARY_PATH"] = nil
        let webAuth = try keystore.run(["web-auth", "http://127.0.0.1:1", "--name", "nobody"], timeout: 30)
        let tpm = try keystore.run(["tpm-status"], timeout: 30)
        // Both fail here (no identity, no TPM or a planted library without its functions): what matters is
        // whether a planted library was loaded on the way.
        #expect(webAuth.status != 0 && tpm.status != 0, "\(webAuth.stderr)\n\(tpm.stderr)")
        return FileManager.default.fileExists(atPath: marker)
    }
}

@Suite(.offThePool) struct PlantedLibraryTests {
    /// The test build keeps SwiftPM's `$ORIGIN`, and so shows that the check above sees a planted library loaded:
    /// when the installed build passes it, it is because the binary did not look beside itself.
    @Test func aBinaryWithOriginInItsRunpathLoadsALibraryPlantedBesideIt() throws {
        try #require(try PlantedLibrary.searchPaths(of: KeystoreProcess.binary).contains { $0.contains("$ORIGIN") },
                     "the test build no longer has $ORIGIN; this control needs a binary that has")
        #expect(try PlantedLibrary.constructorRuns(beside: KeystoreProcess.binary))
    }
}
