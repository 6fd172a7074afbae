// An app imports StellarKeystore alone and has the whole API: keys, StrKeys, SEP-53, phrases and transactions
// come from the targets below it, as SwiftPM layers them.
@_exported import StellarKeys
@_exported import StellarTransactions
