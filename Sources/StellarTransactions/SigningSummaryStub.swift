#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import StellarKeys

// TEMPORARY: replaced by the real SigningSummary at merge.
public struct SigningSummary: Sendable, Encodable {
    public let title: String
    public let warnings: [String]
    public let lines: [String]
    public let isElided: Bool
    public let network: StellarNetwork?
    let transaction: TransactionSummary?

    public var text: [String] { [title] + warnings.map { "  !! " + $0 } + lines }
    public static let maximumLines = 200
    public static let maximumBytes = 32 * 1024

    enum CodingKeys: String, CodingKey { case title, warnings, lines, transaction }

    static func make(_ all: [String], network: StellarNetwork?, transaction: TransactionSummary? = nil) -> SigningSummary {
        SigningSummary(title: all.first ?? "", warnings: [], lines: Array(all.dropFirst()), isElided: false, network: network, transaction: transaction)
    }

    public static func payload(_ bytes: [UInt8], signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        make(["Sign \(bytes.count) raw bytes as \(signer.key.accountID) (\(signer.name)):", "  payload (hex): \(Hex.string(bytes))"], network: nil)
    }
    public static func message(_ bytes: [UInt8], signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        make(["Sign a SEP-53 message as \(signer.key.accountID) (\(signer.name)):", "  message: \(SummaryText.quoted(bytes))"], network: nil)
    }
    public static func transaction(_ envelope: TransactionEnvelope, on network: StellarNetwork,
                                   signingAs signer: (name: String, key: PublicKey)?, now: Date = Date()) -> SigningSummary {
        let summary = TransactionSummary(envelope, on: network, signingAs: signer, now: now)
        return make(summary.lines, network: network, transaction: summary)
    }
    public static func authorizations(in envelope: TransactionEnvelope, on network: StellarNetwork, plan: AuthorizationPlan,
                                      expirationLedger: UInt32, signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        make(TransactionSummary(envelope, on: network).lines + plan.lines(expirationLedger: expirationLedger, signingAs: signer), network: network)
    }
    public static func preimage(_ preimage: AuthorizationPreimage, on network: StellarNetwork,
                                signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        make(preimage.lines(on: network, signingAs: signer), network: network)
    }
    public static func signIn(_ challenge: WebAuthChallenge, signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        make(challenge.summary(signerName: signer.name), network: challenge.expectation.network)
    }
}
extension SigningSummary {
    public static func batch(_ what: String, network: StellarNetwork?, signingAs signer: (name: String, key: PublicKey)) -> SigningSummary {
        SigningSummary(title: "Sign \(what) from a batch as \(signer.key.accountID) (\(signer.name))", warnings: ["each request is signed without being shown"], lines: [], isElided: true, network: network, transaction: nil)
    }
}
