import Foundation
import Testing
import TestFixtures

/// The tmux helper leaves nothing behind: tmux 3.3a keeps its socket file after `kill-server`.
@Suite(.offThePool) struct TmuxTests {
    @Test(.enabled(if: Tmux.isInstalled, "needs tmux"))
    func theServerSocketIsGoneWhenTheHelperEnds() throws {
        var socket = ""
        do {
            let tmux = try Tmux(running: "sleep 60")
            socket = try tmux.run(["display-message", "-p", "#{socket_path}"]).trimmingCharacters(in: .newlines)
            #expect(socket.contains("keystore-test-") && FileManager.default.fileExists(atPath: socket), "\(socket)")
        }
        #expect(!socket.isEmpty && !FileManager.default.fileExists(atPath: socket), "\(socket) outlived the helper")
    }
}
