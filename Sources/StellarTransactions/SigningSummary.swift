#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import StellarKeys

/// What a person must see before a key signs, rendered one way everywhere (command line, agent prompt, app).
public struct SigningSummary: Sendable, Encodable {
    public let title: String
    public let warnings: [String]
    public let lines: [String]
    public let isElided: Bool
    public let network: StellarNetwork?
    public let text: [String]
    let kind: String
    let transaction: TransactionSummary?

    public static let maximumLines = 500
    public static let maximumBytes = 64 << 10

    init(kind: String, title: String, warnings: [String], lines: [String], isElided: Bool, network: StellarNetwork?,
         transaction: TransactionSummary? = nil) {
        self.kind = kind
        self.title = title
        self.warnings = warnings
        self.lines = lines
        self.isElided = isElided
        self.network = network
        self.transaction = transaction
        text = [title] + warnings.map { "  !! " + $0 } + lines
    }

    public static func quoted(_ text: String) -> String { SummaryText.quoted(text) }
    public static func quoted(_ bytes: [UInt8]) -> String { SummaryText.quoted(bytes) }
    public static func quotedIfNeeded(_ text: String) -> String { TerminalText.escaped(text) }

    public static func payload(_ bytes: [UInt8], signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        let preview = bytes.count <= 64 ? Hex.string(bytes) : Hex.string(Array(bytes.prefix(64))) + "… (\(bytes.count - 64) bytes more)"
        return SigningSummary(kind: "payload", title: "Sign \(bytes.count) raw bytes as \(signer.key.accountID) (\(signer.name)):",
                              warnings: [], lines: ["  payload (hex): \(preview)"], isElided: false, network: nil)
    }

    public static func message(_ bytes: [UInt8], signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        let shown = String(validating: bytes, as: UTF8.self).map { "  message: \(TerminalText.escaped($0, limit: 200))" }
            ?? "  message (hex): \(Hex.string(bytes))"
        return SigningSummary(kind: "message", title: "Sign a SEP-53 message as \(signer.key.accountID) (\(signer.name)):",
                              warnings: [], lines: [shown], isElided: false, network: nil)
    }

    public static func transaction(_ envelope: TransactionEnvelope, on network: StellarNetwork,
                                   signingAs signer: (name: String, key: PublicKey)?, now: Date = Date()) -> SigningSummary {
        let summary = TransactionSummary(envelope, on: network, signingAs: signer, now: now)
        let all = summary.lines
        return SigningSummary(kind: "transaction", title: all[0], warnings: summary.warnings,
                              lines: Array(all.dropFirst(1 + summary.warnings.count)), isElided: false, network: network,
                              transaction: summary)
    }

    public static func authorizations(in envelope: TransactionEnvelope, on network: StellarNetwork, plan: AuthorizationPlan,
                                      expirationLedger: UInt32, signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        let summary = TransactionSummary(envelope, on: network)
        let all = summary.lines
        return SigningSummary(kind: "authorizations", title: all[0], warnings: summary.warnings,
                              lines: Array(all.dropFirst(1 + summary.warnings.count))
                                + plan.lines(expirationLedger: expirationLedger, signingAs: signer),
                              isElided: false, network: network, transaction: summary)
    }

    public static func preimage(_ preimage: AuthorizationPreimage, on network: StellarNetwork,
                                signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        let all = preimage.lines(on: network, signingAs: signer)
        return SigningSummary(kind: "authorization", title: all[0], warnings: [], lines: Array(all.dropFirst()), isElided: false,
                              network: network)
    }

    public static func signIn(_ challenge: WebAuthChallenge, signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        let all = challenge.summary(signerName: signer.name)
        return SigningSummary(kind: "sign-in", title: all[0], warnings: [], lines: Array(all.dropFirst()), isElided: false,
                              network: challenge.expectation.network)
    }

    private enum CodingKeys: String, CodingKey { case kind, title, warnings, elided, lines, transaction }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(title, forKey: .title)
        try container.encode(warnings, forKey: .warnings)
        try container.encode(isElided, forKey: .elided)
        try container.encode(lines, forKey: .lines)
        try container.encodeIfPresent(transaction, forKey: .transaction)
    }
}
