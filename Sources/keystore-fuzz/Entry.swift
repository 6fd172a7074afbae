import Glibc
import StellarKeystore
import StellarKeys
import StellarTransactions

// Built two ways (fuzz/run does the first, `swift build` the second):
// - with `-sanitize=fuzzer -D KEYSTORE_FUZZING`, it hands over to libFuzzer, which fuzzes the target that
//   KEYSTORE_FUZZ_TARGET names;
// - normally, `keystore-fuzz replay TARGET PATH…` runs saved inputs (the committed corpus and every crasher
//   ever found) through the same checks, which is how the test suite keeps them as regression tests, and
//   `keystore-fuzz seeds DIR` writes the seed corpus.

func printError(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

#if KEYSTORE_FUZZING
/// libFuzzer's entry for programs that have their own `main`.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target KEYSTORE_FUZZ_TARGET names, read once.
let selectedTarget: FuzzTarget = {
    guard let name = getenv("KEYSTORE_FUZZ_TARGET").map({ String(cString: $0) }), let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        printError("keystore-fuzz: set KEYSTORE_FUZZ_TARGET to one of: \(names)\n")
        exit(2)
    }
    return target
}()

// Which `main` the program starts in depends on how SwiftPM links executables (it may point `main` at Swift's,
// or libFuzzer's may win); both end up here.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selectedTarget.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

@main
enum KeystoreFuzz {
    static func main() {
        _ = selectedTarget
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzerTestOneInput))
    }
}
#else
@main
enum KeystoreFuzz {
    static func main() throws {
        let arguments = CommandLine.arguments.dropFirst()
        switch (arguments.first, arguments.dropFirst().first) {
        case ("replay", let name?):
            guard let target = FuzzTarget(rawValue: name) else { usage() }
            var count = 0
            for path in arguments.dropFirst(2) {
                for file in inputFiles(at: path) {
                    let bytes = try contents(of: file)
                    bytes.withUnsafeBytes { target.run($0) }
                    count += 1
                }
            }
            print("\(target.rawValue): \(count) inputs replayed, all checks held")
        case ("seeds", let directory?):
            try SeedCorpus.write(to: directory)
        default:
            usage()
        }
    }

    static func usage() -> Never {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
        printError("usage: keystore-fuzz replay \(names) FILE|DIR…\n       keystore-fuzz seeds DIR\n")
        exit(64)
    }

    /// `path` itself, or the files directly inside it.
    static func inputFiles(at path: String) -> [String] {
        guard let names = AtomicFile.fileNames(in: path) else { return [path] }
        return names.filter { !$0.hasPrefix(".") }.sorted().map { "\(path)/\($0)" }
    }

    /// A saved input; libFuzzer never makes one larger than its -max_len (4096 bytes by default).
    static func contents(of path: String) throws -> [UInt8] {
        guard let bytes = try AtomicFile.read(path, limit: 1 << 20) else { throw ReplayError(path: path) }
        return bytes
    }

    struct ReplayError: Error, CustomStringConvertible {
        let path: String
        var description: String { "cannot read \(path)" }
    }
}
#endif
