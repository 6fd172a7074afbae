import Foundation
import Testing
import TestFixtures
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// SIGKILL during the commands that write, both at every step in turn (KEYSTORE_TEST_CRASH_AT, debug builds
/// only) and at random moments: afterwards the identity opens with the old PIN or the new one (or is cleanly
/// gone, for remove), never neither, no leftover temporary file is taken for a vault, and the next write
/// clears such leftovers. `KEYSTORE_LONG_TESTS=1` runs 300 random kills per command instead of 20.
@Suite(.offThePool, .serialized) struct CrashConsistencyTests {
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
            // The identity, and the backups that `--replace` keeps of it.
            #expect((line.hasPrefix("\(name)\t") || line.hasPrefix("\(name) (backup ")) && !line.contains("cannot be read"), "\(line)")
        }
    }

    /// Runs `arguments` stopping at step 1, then 2, and so on until a run completes; calls `check` after every
    /// stop with the step's name. Returns the steps, in order.
    func stopAtEveryStep(_ home: KeystoreHome, _ arguments: () -> [String], stdin: () -> String,
                         check: (String) throws -> Void) throws -> [String] {
        var steps: [String] = []
        for stop in 1...30 {
            var process = home.keystore
            process.environment["KEYSTORE_TEST_CRASH_AT"] = String(stop)
            let result = try process.run(arguments(), stdin: Array(stdin().utf8))
            guard result.status == 128 + SIGKILL else {
                #expect(result.status == 0, "\(result.stderr)")
                break
            }
            let marker = "keystore: crash point \(stop): "
            let step = try #require(result.stderrLines.last.flatMap { $0.hasPrefix(marker) ? String($0.dropFirst(marker.count)) : nil },
                                    "\(result.stderr)")
            steps.append(step)
            try check(step)
            try checkNoStrayVault(home)
        }
        #expect(temporaryFiles(home).isEmpty, "the completing run cleared what the killed ones left")
        return steps
    }

    func temporaryFiles(_ home: KeystoreHome) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: home.path)) ?? []).filter { $0.contains(".tmp-") }
    }

    static let writeSteps = ["temporary file created", "temporary file written", "temporary file flushed",
                             "renamed over the old file", "directory flushed"]
    /// A PIN is tried only after the attempt is counted: the counter's write comes first.
    static let countedAttemptSteps = writeSteps

    @Test func changePINStoppedAtEveryStep() throws {
        let home = try KeystoreHome()
        try home.addGolden()
        var pins = ["270419", "918273"]
        var stepsSoFar: [String] = []
        let steps = try stopAtEveryStep(
            home, { ["change-pin", "--name", name, "--kdf", "interactive", "--pin-stdin", "--new-pin-fd", "0"] },
            stdin: { "\(pins[0])\n\(pins[1])\n" }
        ) { step throws in
            let index = stepsSoFar.count
            stepsSoFar.append(step)
            let vaultStep = index - Self.countedAttemptSteps.count
            let now = try #require(try openingPIN(home, pins), "after '\(step)' the vault opens with neither PIN")
            #expect(now == (vaultStep >= 3 ? pins[1] : pins[0]), "\(index): \(step)")
            #expect(temporaryFiles(home).isEmpty == (index % Self.writeSteps.count >= 3), "\(index): \(step)")
            if now == pins[1] { pins.swapAt(0, 1) }
        }
        #expect(steps == Self.countedAttemptSteps + Self.writeSteps)
    }

    @Test func replacingStoppedAtEveryStep() throws {
        let home = try KeystoreHome()
        try home.addGolden()
        let steps = try stopAtEveryStep(
            home, { ["signup", "--name", name, "--replace", "--kdf", "interactive", "--pin-stdin"] }, stdin: { "918273\n" }
        ) { step throws in
            #expect(try openingPIN(home, ["270419", "918273"]) != nil, "after '\(step)' the vault opens with neither PIN")
        }
        #expect(steps == ["backup linked"] + Self.writeSteps + ["wrong-PIN count cleared"])
        // Each stopped run kept its backup: every one is a whole vault that opens.
        let backups = try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0.contains(".backup-") }
        #expect(backups.count == steps.count + 1)
    }

    @Test func removeStoppedAtEveryStep() throws {
        let home = try KeystoreHome()
        try home.addGolden()
        var stepsSoFar = 0
        let steps = try stopAtEveryStep(home, { ["remove", "--name", name, "--pin-stdin"] }, stdin: { "270419\n" }) { step throws in
            // After the attempt is counted comes the unlink itself, so from then on the identity is cleanly gone.
            let gone = stepsSoFar >= Self.countedAttemptSteps.count
            stepsSoFar += 1
            #expect(FileManager.default.fileExists(atPath: home.vaultPath(name)) == !gone, "\(step)")
            if gone { try home.addGolden() }
        }
        #expect(steps == Self.countedAttemptSteps + ["vault unlinked", "wrong-PIN count cleared", "directory flushed"])
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
