import Foundation
import Testing
@testable import StellarKeystore
import StellarKeys

/// Files that anyone who can write the keystore directory can plant are read by `StrictJSON` once, and by
/// nothing else: a key given twice is damage, never "the first one wins".
@Suite struct StrictInputTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func aThrottleRecordWithARepeatedKeyIsDamaged() {
        let repeated = Throttle.parse(Array(#"{"failures":0,"failures":0,"lockedUntil":0}"#.utf8), now: now)
        #expect(repeated == Throttle.damaged && repeated.triesBeforeWait == 1)
        let nested = Throttle.parse(Array(#"{"failures":0,"lockedUntil":0,"x":{"a":1,"a":1}}"#.utf8), now: now)
        #expect(nested == Throttle.damaged)
    }

    @Test func aThrottleRecordIsReadAsItWasWritten() {
        let plain = Throttle.parse(Array(#"{"failures":6,"lockedUntil":1700000030.25}"#.utf8), now: now)
        #expect(plain.failures == 6 && plain.lockedUntil == 1_700_000_030.25 && !plain.wasClamped)
        let integer = Throttle.parse(Array(#"{"lockedUntil":1700000060,"failures":5}"#.utf8), now: now)
        #expect(integer.failures == 5 && integer.secondsLeft(now: now) == 60)
        // Not integers where the format says integer, a missing field, a string: damaged.
        for text in [#"{"failures":1.5,"lockedUntil":0}"#, #"{"failures":1}"#, #"{"failures":"1","lockedUntil":0}"#] {
            #expect(Throttle.parse(Array(text.utf8), now: now) == Throttle.damaged, "\(text)")
        }
    }

    @Test func aCalibrationIsReadStrictly() throws {
        let written = KDFCalibration(level: .moderate, secondsPerUnlock: ["interactive": 0.07, "moderate": 0.4])
        let bytes = Array(try JSONEncoder().encode(written))
        #expect(KDFCalibration(json: bytes) == written)
        #expect(KDFCalibration(json: Array(#"{"level":"sensitive","level":"interactive","secondsPerUnlock":{}}"#.utf8)) == nil)
        #expect(KDFCalibration(json: Array(#"{"level":"moderate","secondsPerUnlock":{"a":1,"a":2}}"#.utf8)) == nil)
        #expect(KDFCalibration(json: Array(#"{"level":"extreme","secondsPerUnlock":{}}"#.utf8)) == nil)
        #expect(KDFCalibration(json: Array(#"{"level":"moderate","secondsPerUnlock":{"moderate":"fast"}}"#.utf8)) == nil)
    }
}
