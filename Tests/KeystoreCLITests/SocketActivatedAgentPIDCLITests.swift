import Foundation
import Testing
import TestFixtures
import StellarKeystore

/// The pid `agent start` reports for a socket-activated agent is the agent's, not its service manager's (found in
/// issue 33's review of socket activation).
@Suite(.offThePool) struct SocketActivatedAgentPIDCLITests {
    /// A service manager as systemd is one: it binds and listens itself, then forks and executes the agent in a
    /// child with the socket as descriptor 3 (LISTEN_PID the child's), and keeps listening after the child ends.
    /// (systemd-socket-activate, which the other tests use, executes the agent in its own place: the listener and
    /// the agent are then one process, which hides whatever depends on who called listen().)
    static let manager = """
        import os, signal, socket, sys
        path, pidfile, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
        os.umask(0o077)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path); s.listen(16)
        child = os.fork()
        if child == 0:
            os.dup2(s.fileno(), 3); os.set_inheritable(3, True)
            os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS="1", LISTEN_FDNAMES="agent")
            os.execv(argv[0], argv)
        with open(pidfile + ".tmp", "w") as f: f.write(str(child))
        os.rename(pidfile + ".tmp", pidfile)
        os.waitpid(child, 0)
        signal.pause()
        """

    /// The manager above, and the agent it started (its pid), once both are up.
    static func managed(_ agent: AgentHome) throws -> (manager: KeystoreProcess.Running, agentPID: pid_t) {
        try FileManager.default.createDirectory(atPath: agent.home.runtime + "/keystore", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let pidfile = agent.home.path + "/agent.pid"
        var python = agent.keystore()
        python.program = "/usr/bin/python3"
        let manager = try python.start(["-c", manager, agent.socket, pidfile, KeystoreProcess.binary, "agent", "--foreground"])
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: pidfile) { usleep(10_000) }
        let pid = try String(contentsOfFile: pidfile, encoding: .utf8)
        return (manager, try #require(pid_t(pid)))
    }

    /// `Status.pid` is "the agent's process, as the kernel reports the server of this connection", and `agent
    /// start` prints it. For a socket a service manager listens on, SO_PEERCRED names the process that called
    /// listen(): systemd's user manager, not the agent. `agent start` then tells the user a pid to kill that is
    /// their systemd --user (and AGENT.md's "keystore's client shows the pid SO_PEERCRED gives" is that pid).
    @Test func statusPIDOfASocketActivatedAgentIsTheAgentsNotTheManagers() throws {
        let agent = try AgentHome()
        let (manager, agentPID) = try Self.managed(agent)
        defer {
            kill(agentPID, SIGTERM)
            kill(manager.pid, SIGTERM)
            _ = try? manager.wait(timeout: 20)
            unlink(agent.socket)
        }
        try agent.addGolden()
        let status = try AgentClient(socketPath: agent.socket).status()
        #expect(status.isSocketActivated)
        let start = try agent.keystore().run(["agent"])
        #expect(start.status == 0, "\(start.stderr)")
        #expect(status.pid == Int(agentPID) && start.stderr.contains("pid \(agentPID),"),
                "the agent is pid \(agentPID), the manager pid \(manager.pid); status says \(status.pid), agent start: \(start.stderr)")
        let stop = try agent.keystore().run(["agent", "stop"])
        #expect(stop.status == 0, "\(stop.stderr)")
    }
}
