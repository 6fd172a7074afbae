import Testing
@testable import StellarText

/// The one edit distance, which suggests both phrase words and command names.
@Suite struct EditDistanceTests {
    @Test func countsInsertionsDeletionsAndSubstitutions() {
        #expect(EditDistance.between(Array("kitten"), Array("sitting")) == 3)
        #expect(EditDistance.between(Array("sign-tx"), Array("sgin-tx")) == 2)
        #expect(EditDistance.between(Array("abandon".utf8), Array("abandn".utf8)) == 1)
        #expect(EditDistance.between([UInt8](), Array("able".utf8)) == 4)
        #expect(EditDistance.between(Array("same"), Array("same")) == 0)
    }
}
