/// CRC-16/XMODEM (polynomial 0x1021, initial value 0, no reflection): the StrKey checksum of SEP-23.
package enum CRC16 {
    package static func xmodem(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
