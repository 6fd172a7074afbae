import Glibc
internal import CPlatform
import StellarKeys
import StellarText

/// One run of an age plugin: the program `age-plugin-NAME`, started with a state machine's flag and spoken to in
/// stanzas over its standard input and output (age-plugin.md, "IPC protocol"), framed as an age header's stanzas
/// are (`AgeHeader`). A plugin is a program of the person's, but not one to trust with this process: everything it
/// sends is bounded (each stanza, all it writes, how long it may be silent), a number from it never becomes a size,
/// and a plugin that dies, hangs or speaks nonsense is stopped, its end described in one line.
final class AgePluginConnection {
    /// Larger than any stanza a recipient needs (a post-quantum one is under 2 KiB), and than any message to show.
    static let maximumStanzaSize = 64 << 10
    /// All a plugin may write in one run: a few stanzas and messages; more is a plugin gone wrong.
    static let maximumOutput = 1 << 20
    /// The end of what it wrote to standard error, kept to say why it stopped.
    static let keptErrorOutput = 4096
    /// Silent this long, the person is told that the plugin is waiting (age's own figure, `WaitTimer`).
    static let waitingNotice: Duration = .seconds(5)
    /// The flag that picks the state machine. It is the plugin's, not this library's: it is spelt in two pieces so
    /// that no literal here reads as an option of a tool.
    static let stateMachineFlag = "-" + "-age-plugin="

    let name: String
    private let host: AgePluginHost
    private let pid: pid_t
    private var input: Int32
    private var output: Int32
    private var errors: Int32
    /// Read from the plugin's output, not yet taken as a stanza; zeroed as it is taken (a file key passes here).
    private var received: [UInt8] = []
    private var outputCount = 0
    private var errorOutput: [UInt8] = []
    private var waitStatus: Int32?

    private init(name: String, host: AgePluginHost, pid: pid_t, input: Int32, output: Int32, errors: Int32) {
        self.name = name
        self.host = host
        self.pid = pid
        self.input = input
        self.output = output
        self.errors = errors
        received.reserveCapacity(Self.maximumStanzaSize + 4096)
    }

    deinit { stop() }

    /// The plugin's program: `age-plugin-NAME` in the first absolute directory of `PATH` that has it as a regular,
    /// executable file. A relative directory (or an empty one, which means the working directory) is skipped, as
    /// age-plugin.md asks: a file in whatever directory the person stands in must not run as their plugin.
    static func program(for name: String, environment: [String: String]?) throws(AgeError) -> String {
        let path = (environment ?? processEnvironment())["PATH"] ?? ""
        for directory in path.split(separator: ":") where directory.hasPrefix("/") {
            let candidate = "\(directory)/age-plugin-\(name)"
            var status = stat()
            if stat(candidate, &status) == 0, status.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        throw .pluginNotFound(name)
    }

    /// Starts `program` for `stateMachine` (recipient-v1, identity-v1).
    static func start(_ program: String, name: String, stateMachine: String, host: AgePluginHost) throws(AgeError) -> AgePluginConnection {
        var toPlugin: [Int32] = [-1, -1], fromPlugin: [Int32] = [-1, -1], errorsFromPlugin: [Int32] = [-1, -1]
        func closeAll() { for fd in toPlugin + fromPlugin + errorsFromPlugin where fd >= 0 { close(fd) } }
        guard pipe(&toPlugin) == 0, pipe(&fromPlugin) == 0, pipe(&errorsFromPlugin) == 0 else {
            let reason = String(cString: strerror(errno))
            closeAll()
            throw .pluginFailed(name, reason: "could not start (\(reason))")
        }
        for fd in toPlugin + fromPlugin + errorsFromPlugin { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toPlugin[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromPlugin[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errorsFromPlugin[1], 2)
        // Nothing else of this process's: no vault, lock or terminal descriptor reaches the plugin.
        _ = keystore_spawn_close_from(&actions, 3)
        // age runs a plugin in the temporary directory, so that none comes to rely on where it was started.
        let environment = (host.environment ?? processEnvironment()).filter { !$0.key.hasPrefix("KEYSTORE_") }
        _ = keystore_spawn_chdir(&actions, environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp")
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Every signal at its default and none blocked: this process may ignore SIGPIPE or hold signals, the plugin must not.
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let words: [String] = [program, stateMachineFlag + stateMachine]
        let argv = words.map { strdup($0) } + [nil]
        let variables: [String] = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let envp = variables.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let started = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        close(toPlugin[0]); close(fromPlugin[1]); close(errorsFromPlugin[1])
        guard started == 0 else {
            close(toPlugin[1]); close(fromPlugin[0]); close(errorsFromPlugin[0])
            throw .pluginFailed(name, reason: "could not start (\(String(cString: strerror(started))))")
        }
        for fd in [toPlugin[1], fromPlugin[0], errorsFromPlugin[0]] { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return AgePluginConnection(name: name, host: host, pid: pid, input: toPlugin[1], output: fromPlugin[0], errors: errorsFromPlugin[0])
    }

    // MARK: Stanzas

    /// Sends one stanza. `secretArgument` (an identity) follows the other arguments and `secretBody` (a file key, a
    /// PIN) replaces the body; both pass through memory that is zeroed once written.
    func send(_ type: String, _ arguments: [String] = [], secretArgument: SecureBytes? = nil, body: [UInt8] = [],
              secretBody: SecureBytes? = nil) throws(AgeError) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + type.utf8.count + arguments.reduce(0) { $0 + $1.utf8.count + 1 } + (secretArgument?.count ?? 0)
                              + (secretBody?.count ?? body.count) * 2)
        defer { Sodium.zero(&bytes) }
        var plainBody = secretBody.map { secret in secret.withUnsafeBytes { Array($0) } } ?? body
        defer { if secretBody != nil { Sodium.zero(&plainBody) } }
        var encoded: [UInt8] = []
        encoded.reserveCapacity(bytes.capacity)  // one buffer, so that no copy of a secret is left where it grew
        AgeHeader.encode(AgeStanza(type: type, arguments: arguments, body: plainBody), into: &encoded)
        defer { Sodium.zero(&encoded) }
        let opening = encoded.firstIndex(of: UInt8(ascii: "\n"))!
        bytes += encoded[..<opening]
        if let secretArgument {
            bytes.append(UInt8(ascii: " "))
            secretArgument.withUnsafeBytes { bytes += $0 }
        }
        bytes += encoded[opening...]
        try write(bytes)
    }

    /// The plugin's next stanza, waiting at most the host's timeout for it (and telling the presenter when it has
    /// waited a while, once).
    func receive() throws(AgeError) -> AgeStanza {
        let start = ContinuousClock.now
        var told = false
        while true {
            if let stanza = try takeStanza() { return stanza }
            let waited = ContinuousClock.now - start
            guard waited < host.timeout else { throw .pluginTimedOut(name, seconds: Int(host.timeout.components.seconds)) }
            let until = told || waited >= Self.waitingNotice ? host.timeout : min(host.timeout, Self.waitingNotice)
            var fds = [pollfd(fd: output, events: Int16(POLLIN), revents: 0), pollfd(fd: errors, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, errors >= 0 ? 2 : 1, Self.milliseconds(until - waited))
            if ready < 0 && errno != EINTR { throw .pluginFailed(name, reason: "could not be read from (\(String(cString: strerror(errno))))") }
            let now = ContinuousClock.now - start
            if ready == 0 && !told && now >= Self.waitingNotice && now < host.timeout {
                told = true
                host.presenter.waiting(plugin: name)
            }
            if fds[1].revents != 0 { drainErrors() }
            if fds[0].revents != 0 { try readOutput() }
        }
    }

    /// The whole stanza at the start of what was received, nil while it has not all arrived; what is not the start
    /// of one is refused at once rather than waited on.
    private func takeStanza() throws(AgeError) -> AgeStanza? {
        let prefix = Array("-> ".utf8)
        guard received.prefix(3).elementsEqual(prefix.prefix(received.count)) else {
            throw .pluginBrokeProtocol(name, reason: "it wrote something that is not a stanza")
        }
        guard let length = AgeHeader.stanzaLength(in: received[...]) else {
            guard received.count <= Self.maximumStanzaSize else {
                throw .pluginBrokeProtocol(name, reason: "it sent a stanza of over \(Self.maximumStanzaSize >> 10) KiB")
            }
            if let newline = received.firstIndex(of: UInt8(ascii: "\n")), newline > AgeHeader.maximumLineLength {
                throw .pluginBrokeProtocol(name, reason: "it sent a line of over \(AgeHeader.maximumLineLength) bytes")
            }
            return nil
        }
        guard length <= Self.maximumStanzaSize else {
            throw .pluginBrokeProtocol(name, reason: "it sent a stanza of over \(Self.maximumStanzaSize >> 10) KiB")
        }
        var bytes = Array(received[..<length])
        defer { Sodium.zero(&bytes) }
        received.withUnsafeMutableBytes { Sodium.zero(UnsafeMutableRawBufferPointer(rebasing: $0[..<length])) }
        received.removeFirst(length)
        do {
            return try AgeHeader.stanza(exactly: bytes)
        } catch {
            guard case .malformedHeader(let reason) = error else { throw error }
            throw .pluginBrokeProtocol(name, reason: reason)
        }
    }

    private func readOutput() throws(AgeError) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer { Sodium.zero(&chunk) }
        let count = read(output, &chunk, chunk.count)
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return }
            throw .pluginFailed(name, reason: "could not be read from (\(String(cString: strerror(errno))))")
        }
        guard count > 0 else { throw ended() }
        outputCount += count
        guard outputCount <= Self.maximumOutput else {
            throw .pluginBrokeProtocol(name, reason: "it wrote over \(Self.maximumOutput >> 20) MiB")
        }
        received += chunk[..<count]
    }

    /// Reads what the plugin wrote to standard error, keeping its end only, so that it never blocks on a full pipe.
    private func drainErrors() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while errors >= 0 {
            let count = read(errors, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count == 0 { close(errors); errors = -1 }
            guard count > 0 else { return }
            errorOutput += chunk[..<count]
            if errorOutput.count > Self.keptErrorOutput { errorOutput.removeFirst(errorOutput.count - Self.keptErrorOutput) }
        }
    }

    private func write(_ bytes: [UInt8]) throws(AgeError) {
        // A plugin that has exited makes a write raise SIGPIPE, which would end this process: it is blocked on this
        // thread for the write, whose EPIPE then says so, and a SIGPIPE left pending is taken before unblocking.
        var pipeSignal = sigset_t(), previous = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        defer {
            var pending = sigset_t()
            sigpending(&pending)
            if sigismember(&previous, SIGPIPE) == 0 && sigismember(&pending, SIGPIPE) == 1 {
                var now = timespec()
                sigtimedwait(&pipeSignal, nil, &now)
            }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        let start = ContinuousClock.now
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(input, $0.baseAddress! + offset, bytes.count - offset) }
            if count > 0 { offset += count; continue }
            guard count < 0, errno == EAGAIN || errno == EINTR else { throw ended() }
            let waited = ContinuousClock.now - start
            guard waited < host.timeout else { throw .pluginTimedOut(name, seconds: Int(host.timeout.components.seconds)) }
            var fds = [pollfd(fd: input, events: Int16(POLLOUT), revents: 0), pollfd(fd: errors, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, errors >= 0 ? 2 : 1, Self.milliseconds(host.timeout - waited))
            if fds[1].revents != 0 { drainErrors() }
        }
    }

    // MARK: The process

    /// After the protocol's last `done`: its input closed, the plugin is given a few seconds to exit, then stopped.
    func finish() {
        guard waitStatus == nil else { return }
        closeStreams()
        _ = reap(within: .seconds(5))
        stop()
    }

    /// Stops the plugin now (SIGKILL, to its process only) and reaps it; nothing of it is left running.
    func stop() {
        closeStreams()
        guard waitStatus == nil else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        waitStatus = status
    }

    private func closeStreams() {
        for fd in [input, output, errors] where fd >= 0 { close(fd) }
        input = -1; output = -1; errors = -1
        Sodium.zero(&received)
        received = []
    }

    /// The wait status once the plugin has exited within `limit`, else nil.
    private func reap(within limit: Duration) -> Int32? {
        if let waitStatus { return waitStatus }
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { waitStatus = status; return status }
            if reaped < 0 && errno != EINTR { return nil }
            usleep(10_000)
        }
        return nil
    }

    /// Why the plugin stopped talking: how it ended, and the last line it wrote to standard error.
    private func ended() -> AgeError {
        drainErrors()
        var reason = "stopped before it finished"
        if let status = reap(within: .seconds(1)) {
            reason += status & 0x7F == 0 ? " (exit status \(status >> 8 & 0xFF))" : " (killed by signal \(status & 0x7F))"
        }
        let lines = String(decoding: errorOutput, as: UTF8.self).split(whereSeparator: \.isNewline)
        if let last = lines.last(where: { !$0.allSatisfy(\.isWhitespace) }) {
            reason += ": it said \"\(TerminalText.escaped(last.drop(while: \.isWhitespace), limit: 200))\""
        }
        return .pluginFailed(name, reason: reason)
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1))
    }

    /// This process's environment, as the plugin gets it unless the host gives one.
    private static func processEnvironment() -> [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") { variables[String(text[..<equals])] = String(text[text.index(after: equals)...]) }
            entry += 1
        }
        return variables
    }
}
