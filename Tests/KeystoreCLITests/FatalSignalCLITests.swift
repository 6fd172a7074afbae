import Foundation
import Testing
import TestFixtures
import StellarKeystore
#if canImport(Glibc)
import Glibc
#endif

/// A keystore process that holds a key dies at once on a fatal signal, printing nothing: the Swift runtime's crash
/// handler would print the memory at every register's address and, asked to (`SWIFT_BACKTRACE`, which anyone who
/// starts the process may set), wait 30 s for a key that opens a debugger on the live process.
@Suite(.offThePool) struct FatalSignalCLITests {
    /// What each child is given: the crash handler on, interactive, whatever a terminal would say.
    static let crashHandlerAsked: [String: String?] = ["SWIFT_BACKTRACE": "enable=yes,interactive=yes"]

    /// Waits at most a second for `process` to end, and checks that `signal` ended it with nothing printed.
    func expectGoneAtOnce(_ process: KeystoreProcess.Running, by signal: Int32 = SIGSEGV,
                          sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ended = try process.wait(timeout: 1)
        #expect(ended.status == 128 + signal, "exit \(ended.status) (137: still running after a second)", sourceLocation: sourceLocation)
        for output in [ended.stdout, ended.stderr] {
            for trace in ["crashed", "Backtrac", "Press space", "Thread 0", "Registers"] {
                #expect(!output.contains(trace), "\(output)", sourceLocation: sourceLocation)
            }
        }
    }

    /// A foreground agent holding the golden key, with the crash handler asked for.
    func agentHoldingAKey(_ agent: AgentHome) throws -> KeystoreProcess.Running {
        var process = agent.keystore()
        for (key, value) in Self.crashHandlerAsked { process.environment[key] = value }
        let running = try process.start(["agent", "start", "--foreground", "--log", agent.log])
        for _ in 0..<500 { guard !(try AgentClient.isListening(at: agent.socket)) else { break }; usleep(10_000) }
        guard try AgentClient.isListening(at: agent.socket) else {
            kill(running.pid, SIGKILL)
            _ = try running.wait(timeout: 10)
            throw SignalTestError("the agent did not start")
        }
        do {
            try agent.addGolden()
        } catch {
            kill(running.pid, SIGKILL)
            _ = try running.wait(timeout: 10)
            throw error
        }
        return running
    }

    /// SIGQUIT (Ctrl-\) too: the runtime's handler takes it for a crash.
    @Test(arguments: [SIGSEGV, SIGQUIT])
    func theAgentDiesAtOnce(on signal: Int32) throws {
        let agent = try AgentHome()
        let running = try agentHoldingAKey(agent)
        kill(running.pid, signal)
        try expectGoneAtOnce(running, by: signal)
    }

    /// A connection that sends nothing keeps a worker thread waiting for its request; the signal goes to that
    /// thread alone (tgkill), as a fault in it would.
    @Test func theAgentDiesAtOnceOnSIGSEGVToOneWorkerThread() throws {
        let agent = try AgentHome()
        let running = try agentHoldingAKey(agent)
        let client = try Self.connect(to: agent.socket)
        defer { close(client) }
        var worker: pid_t?
        for _ in 0..<500 {
            worker = Self.threads(of: running.pid).first { $0 != running.pid }
            if worker != nil { break }
            usleep(10_000)
        }
        guard let worker else {
            kill(running.pid, SIGKILL)
            _ = try running.wait(timeout: 10)
            Issue.record("the agent started no thread for the open connection")
            return
        }
        #expect(Self.tgkill(running.pid, worker, SIGSEGV) == 0, "tgkill: \(String(cString: strerror(errno)))")
        try expectGoneAtOnce(running)
    }

    /// Not only the agent: a batch signer holds the key from its PIN to the end of its input, here while it waits
    /// for more.
    @Test func aBatchSignerWaitingForInputDiesAtOnceOnSIGSEGV() throws {
        let home = try KeystoreHome()
        try home.addGolden()
        let fifo = home.path + "/requests"
        #expect(mkfifo(fifo, 0o600) == 0)
        // Open for reading and writing: it never blocks, and the batch sees no end of input while it stays open.
        let requests = open(fifo, O_RDWR | O_CLOEXEC)
        try #require(requests >= 0)
        defer { close(requests) }
        var process = home.keystore
        for (key, value) in Self.crashHandlerAsked { process.environment[key] = value }
        let running = try process.start(["sign-message", "--batch", "--name", KeystoreHome.golden.name, "--pin-fd", "3"],
                                        files: [3: Array("\(KeystoreHome.golden.pin)\n".utf8)],
                                        prefix: ["sh", "-c", "exec \"$0\" \"$@\" < '\(fifo)'"])
        let line = Array(#"{"message":"hi"}"#.utf8) + [0x0A]
        #expect(write(requests, line, line.count) == line.count)
        // The first signature is out: the key is open.
        let stdout = running.scratch.appendingPathComponent("stdout")
        for _ in 0..<3000 { guard !((try? String(contentsOf: stdout, encoding: .utf8)) ?? "").contains("signature") else { break }; usleep(10_000) }
        #expect(((try? String(contentsOf: stdout, encoding: .utf8)) ?? "").contains("signature"))
        kill(running.pid, SIGSEGV)
        try expectGoneAtOnce(running)
    }

    static func threads(of pid: pid_t) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).compactMap { pid_t($0) }
    }

    /// tgkill(2): glibc has it since 2.30, but Swift's Glibc module does not show it.
    static func tgkill(_ process: pid_t, _ thread: pid_t, _ signal: Int32) -> Int32 {
        typealias Function = @convention(c) (pid_t, pid_t, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "tgkill") else { return -1 }
        return unsafeBitCast(symbol, to: Function.self)(process, thread, signal)
    }

    static func connect(to path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8.prefix($0.count - 1)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, connected == 0 else {
            close(fd)
            throw SignalTestError("cannot connect to \(path)")
        }
        return fd
    }
}

struct SignalTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
