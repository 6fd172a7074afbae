import Foundation
import Testing
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// SIGKILL at random moments during the commands that write: afterwards the identity opens with the old PIN or
/// the new one (or is cleanly gone, for remove), never neither, and no leftover temporary file is taken for a
/// vault. `KEYSTORE_LONG_TESTS=1` runs 300 kills per command instead of 20.
@Suite(.serialized) struct CrashConsistencyTests {
    static let kills = ProcessInfo.processInfo.environment["KEYSTORE_LONG_TESTS"] == "1" ? 300 : 20
    let name = KeystoreHome.golden.name

    /// Which PIN opens the identity now, checked in-process so that the wrong-PIN throttle is not involved.
    func openingPIN(_ home: KeystoreHome, _ pins: [String]) throws -> String? {
        let path = home.vaultPath(name)
        let vault = try Vault(file: Array(try Data(contentsOf: URL(fileURLWithPath: path))), path: path)
        for pin in pins where (try? vault.open(pin: PIN(pin))) != nil { return pin }
        return nil
    }

    /// Starts `arguments`, kills it after a random delay of up to `window` seconds, and returns whether it had
    /// already finished.
    func killSomewhere(_ home: KeystoreHome, _ arguments: [String], stdin: String, window: Double) throws -> Bool {
        let running = try home.keystore.start(arguments, stdin: Array(stdin.utf8))
        usleep(UInt32(Double.random(in: 0...window) * 1_000_000))
        let finished = kill(running.pid, SIGKILL) != 0
        _ = try running.wait()
        return finished
    }

    func checkNoStrayVault(_ home: KeystoreHome) throws {
        let list = try home.run(["list"])
        #expect(list.status == 0)
        for line in list.stdout.split(separator: "\n") {
            #expect(line.hasPrefix("\(name)\t") && !line.contains("cannot be read"), "\(line)")
        }
    }

    @Test func changePINSurvivesKillNine() throws {
        let home = try KeystoreHome()
        try home.addGolden()
        var pins = ["270419", "918273"]
        var completed = 0
        for _ in 0..<Self.kills {
            let finished = try killSomewhere(home, ["change-pin", "--name", name, "--kdf", "interactive", "--pin-stdin", "--new-pin-fd", "0"],
                                             stdin: "\(pins[0])\n\(pins[1])\n", window: 0.25)
            let now = try #require(try openingPIN(home, pins), "the vault opens with neither PIN")
            if now == pins[1] { pins.swapAt(0, 1) }
            if finished { completed += 1 }
            try? FileManager.default.removeItem(atPath: "\(home.path)/.\(name).throttle")
            try checkNoStrayVault(home)
        }
        #expect(completed < Self.kills, "some kills landed during the command")
    }

    @Test func replacingSurvivesKillNine() throws {
        let home = try KeystoreHome()
        try home.addGolden()
        for _ in 0..<Self.kills {
            _ = try killSomewhere(home, ["signup", "--name", name, "--replace", "--kdf", "interactive", "--pin-stdin"],
                                 stdin: "918273\n", window: 0.2)
            #expect(try openingPIN(home, ["270419", "918273"]) != nil, "the vault opens with neither PIN")
            try checkNoStrayVault(home)
        }
    }

    @Test func removeSurvivesKillNine() throws {
        for _ in 0..<Self.kills {
            let home = try KeystoreHome()
            try home.addGolden()
            _ = try killSomewhere(home, ["remove", "--name", name, "--pin-stdin"], stdin: "270419\n", window: 0.15)
            if FileManager.default.fileExists(atPath: home.vaultPath(name)) {
                #expect(try openingPIN(home, ["270419"]) == "270419")
            }
            try checkNoStrayVault(home)
        }
    }
}
