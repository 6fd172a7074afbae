import Glibc
internal import CPlatform
import StellarKeystore

/// Starting the detached agent.
enum Spawn {
    /// Runs this binary with `arguments` in a new session, standard streams on /dev/null; returns its pid.
    static func detached(arguments: [String]) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in 0...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        // Nothing else the launcher has open: a long-lived agent must not hold a caller's files, pipes or sockets.
        let closing = keystore_spawn_close_from(&actions, 3)
        guard closing == 0 else { throw AgentError.system("start the agent", closing) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(0x80))  // POSIX_SPAWN_SETSID: no controlling terminal, no SIGHUP
        let argv = (["keystore"] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/proc/self/exe", &actions, &attributes, argv, environ)
        guard result == 0 else { throw AgentError.system("start the agent", result) }
        return pid
    }
}
