import Foundation
import Glibc
import Testing
@testable import StellarKeys
@testable import StellarKeystore
@testable import StellarKeystoreAgent
import TestFixtures

/// A socket as a service manager hands one over: bound and listening in a directory of the test's, with the mode a
/// loose umask gives (0755), its descriptor owned by the test until `InheritedSocket` adopts it.
final class ManagerSocket {
    let directory = TemporaryDirectory()
    let path: String
    private(set) var fd: Int32

    init(type: Int32 = Int32(SOCK_STREAM.rawValue), listening: Bool = true, directoryMode: mode_t = 0o700,
         socketMode: mode_t = 0o755) throws {
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        chmod(directory.path, directoryMode)
        path = directory.path + "/agent.sock"
        fd = socket(AF_UNIX, type, 0)
        try #require(fd >= 0)
        var address = try UnixSocket.checkedAddress(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        chmod(path, socketMode)
        if listening { try #require(listen(fd, 8) == 0) }
    }

    /// The descriptor is the agent's now (it closes it): not closed twice.
    func handedOver() { fd = -1 }

    deinit { if fd >= 0 { close(fd) } }

    var mode: mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }
}

@Suite(.offThePool) struct InheritedSocketTests {
    static let me = getpid()

    func passed(_ socket: ManagerSocket, count: String = "1", names: String? = nil, expectedPath: String? = nil) throws -> InheritedSocket? {
        try InheritedSocket.passed(pid: "\(Self.me)", count: count, names: names, to: Self.me, from: socket.fd, expectedPath: expectedPath)
    }

    func refusal(_ body: () throws -> InheritedSocket?) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as AgentError {
            guard case .inheritedSocketRefused(let reason) = error else { return "another error: \(error.message)" }
            return reason
        } catch {
            return "another error: \(error)"
        }
    }

    /// sd_listen_fds(3): no LISTEN_PID, or another process's (variables inherited from a parent), is no socket.
    @Test func variablesForAnotherProcessOrNonePassNothing() throws {
        #expect(try InheritedSocket.passed(pid: nil, count: "1", names: nil, to: Self.me, from: 3) == nil)
        #expect(try InheritedSocket.passed(pid: "\(Self.me + 1)", count: "1", names: nil, to: Self.me, from: 3) == nil)
    }

    /// Numbers from the environment are read as digits only, and bounded before they name a descriptor.
    @Test(arguments: [("12a", "1", nil), ("-1", "1", nil), ("", "1", nil), (" 5", "1", nil),
                      ("ME", "0", nil), ("ME", "65", nil), ("ME", "+1", nil), ("ME", "99999999999999999999", nil), ("ME", nil, nil),
                      ("ME", "2", "agent"), ("ME", "1", "a:b")] as [(String, String?, String?)])
    func malformedVariablesAreRefused(pid: String, count: String?, names: String?) throws {
        let pid = pid == "ME" ? "\(Self.me)" : pid
        let reason = refusal { try InheritedSocket.passed(pid: pid, count: count, names: names, to: Self.me, from: 1000) }
        #expect(reason != nil && reason!.hasPrefix("LISTEN_"), "\(reason ?? "taken")")
    }

    /// A socket bound under a loose umask is taken, narrowed to 0600, non-blocking and closed on exec; its path is
    /// the socket's own.
    @Test func aListeningSocketInAPrivateDirectoryIsTakenAndNarrowed() throws {
        let manager = try ManagerSocket()
        #expect(manager.mode == 0o755)
        let fd = manager.fd
        let inherited = try #require(try passed(manager, names: "keystore-agent.socket"))
        manager.handedOver()
        #expect(inherited.path == manager.path)
        #expect(inherited.name == "keystore-agent.socket")
        #expect(manager.mode == 0o600)
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func aSocketElsewhereThanExpectedIsRefused() throws {
        let manager = try ManagerSocket()
        let reason = refusal { try passed(manager, expectedPath: "/run/user/1/keystore/agent.sock") }
        #expect(reason?.contains("not at /run/user/1/keystore/agent.sock") == true, "\(reason ?? "taken")")
    }

    /// The checks the agent makes on a socket of its own, and the client on any: a directory others can enter, a
    /// socket that does not listen or is not a stream, are refused before any connection is accepted.
    @Test func aSocketTheAgentWouldNotMakeIsRefused() throws {
        let open = try ManagerSocket(directoryMode: 0o755)
        #expect(refusal { try passed(open) }?.contains("its directory is not private to you (owner uid \(geteuid()), mode 0755)") == true)
        #expect(open.mode == 0o755, "the mode was changed before the socket was accepted")
        let bound = try ManagerSocket(listening: false)
        #expect(refusal { try passed(bound) }?.contains("is not listening") == true)
        let datagram = try ManagerSocket(type: Int32(SOCK_DGRAM.rawValue), listening: false)
        #expect(refusal { try passed(datagram) }?.contains("is not a Unix stream socket") == true)
        var pipeEnds: [Int32] = [0, 0]
        try #require(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        #expect(refusal { try InheritedSocket.passed(pid: "\(Self.me)", count: "1", names: nil, to: Self.me, from: pipeEnds[0]) }?
            .contains("is not a socket") == true)
    }

    /// An abstract socket has no file: no owner or mode to check.
    @Test func anAbstractSocketIsRefused() throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = Array("\0keystore-test-\(UUID().uuidString)".utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        try #require(bound == 0 && listen(fd, 1) == 0)
        let reason = refusal { try InheritedSocket.passed(pid: "\(Self.me)", count: "1", names: nil, to: Self.me, from: fd) }
        #expect(reason?.contains("listens at no path in the file system") == true, "\(reason ?? "taken")")
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give the socket to another user"))
    func anotherUsersSocketIsRefused() throws {
        let manager = try ManagerSocket()
        try #require(lchown(manager.path, 65534, 65534) == 0)
        #expect(refusal { try passed(manager) }?.contains("it belongs to uid 65534") == true)
    }

    /// Of several, the one named `agent` (FileDescriptorName=agent); the others are closed. Without that name, or
    /// with two, none is guessed.
    @Test func ofSeveralSocketsTheOneNamedAgentIsTakenAndTheOthersClosed() throws {
        let other = try ManagerSocket(), agent = try ManagerSocket()
        // Consecutive descriptors, as the protocol has them.
        let first = fcntl(other.fd, F_DUPFD_CLOEXEC, 500)
        try #require(first >= 500 && dup2(agent.fd, first + 1) == first + 1)
        // Closed here only while no call has taken them: afterwards one is closed and the other is the agent's.
        var taken = false
        defer { if !taken { close(first); close(first + 1) } }
        let unnamed = refusal { try InheritedSocket.passed(pid: "\(Self.me)", count: "2", names: nil, to: Self.me, from: first) }
        #expect(unnamed == "2 sockets were passed, and none is named agent", "\(unnamed ?? "taken")")
        let twice = refusal { try InheritedSocket.passed(pid: "\(Self.me)", count: "2", names: "agent:agent", to: Self.me, from: first) }
        #expect(twice == "2 sockets were passed, and more than one is named agent", "\(twice ?? "taken")")
        taken = true
        let inherited = try #require(try InheritedSocket.passed(pid: "\(Self.me)", count: "2", names: "other:agent", to: Self.me, from: first))
        #expect(inherited.path == agent.path && inherited.name == "agent")
        #expect(fcntl(first, F_GETFD) < 0, "the socket named other was left open")
    }

    /// An agent on a passed socket serves it as its own, says so in `status`, and on `shutdown` drops its keys,
    /// ends the connection that asked, and leaves the socket file, which is the service manager's.
    @Test func anAgentOnAPassedSocketLeavesItToTheManager() throws {
        let manager = try ManagerSocket()
        let inherited = try #require(try passed(manager))
        manager.handedOver()
        let agent = try KeystoreAgent(inheriting: inherited)
        #expect(agent.isSocketActivated && agent.socketPath == manager.path)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            agent.run()
            done.signal()
        }
        let client = AgentClient(socketPath: manager.path)
        try client.add(try AgentTests.signer(), keystore: "/k")
        let status = try client.status()
        #expect(status.isSocketActivated && status.keys == 1 && status.pid == Int(Self.me))
        #expect(try client.shutdown() == .keptByServiceManager)
        // The keys are gone by the time the connection ends: the agent dropped them before it hung up.
        #expect(agent.state.withLock { $0.keys.isEmpty })
        #expect(done.wait(timeout: .now() + 10) == .success)
        var info = stat()
        #expect(lstat(manager.path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK, "the manager's socket was removed")
    }

    /// An agent that made its own socket still removes it, and says it did.
    @Test func anAgentOnItsOwnSocketRemovesIt() throws {
        let running = try RunningAgent()
        #expect(!running.agent.isSocketActivated)
        #expect(try AgentClient(socketPath: running.socketPath).status().isSocketActivated == false)
        #expect(try AgentClient(socketPath: running.socketPath).shutdown() == .removed)
        running.done.wait()
        #expect(!FileManager.default.fileExists(atPath: running.socketPath))
    }
}
