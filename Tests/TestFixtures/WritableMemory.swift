import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The process's own writable anonymous memory, read through /proc/self/mem into a buffer that is itself skipped.
///
/// Nothing here takes memory from the heap until every region has been read (two mmaps, raw reads, /proc/self/maps
/// parsed in place): an allocation made by the scan itself could reuse a freed block and overwrite the very copy it
/// looks for, and the test would pass for the wrong reason.
public enum WritableMemory {
    // Glibc's Swift module leaves out the GNU memmem, so it is looked up by name.
    public static let memmem = unsafeBitCast(
        dlsym(dlopen(nil, RTLD_NOW), "memmem")!,
        to: (@convention(c) (UnsafeRawPointer?, Int, UnsafeRawPointer?, Int) -> UnsafeMutableRawPointer?).self)

    public static func scan<T>(_ inspect: (UnsafeRawBufferPointer) -> [T]) throws -> [T] {
        let size = 1 << 24, mapsSize = 1 << 22
        guard let buffer = mmap(nil, size + mapsSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), buffer != MAP_FAILED else {
            throw POSIXError(.ENOMEM)
        }
        defer { munmap(buffer, size + mapsSize) }
        let own = UInt(bitPattern: buffer)..<(UInt(bitPattern: buffer) + UInt(size + mapsSize))
        let maps = UnsafeMutableRawBufferPointer(start: buffer + size, count: mapsSize)
        let mapsFD = open("/proc/self/maps", O_RDONLY)
        guard mapsFD >= 0 else { throw POSIXError(.EACCES) }
        var length = 0
        while length < maps.count {
            let count = read(mapsFD, maps.baseAddress! + length, maps.count - length)
            if count <= 0 { break }
            length += count
        }
        close(mapsFD)
        guard length < maps.count else { throw POSIXError(.E2BIG) }
        let fd = open("/proc/self/mem", O_RDONLY)
        guard fd >= 0 else { throw POSIXError(.EACCES) }
        defer { close(fd) }
        var results: [T] = []
        func scanRange(_ start: UInt, _ end: UInt) {
            var offset = start
            while offset < end {
                let count = Int(min(UInt(size), end - offset))
                let read = pread(fd, buffer, count, off_t(Int64(bitPattern: UInt64(offset))))
                if read <= 0 { break }
                let found = inspect(UnsafeRawBufferPointer(start: buffer, count: read))
                if !found.isEmpty { results += found }
                let next = offset + UInt(read)
                // Chunks overlap by more than a secret's length, so that nothing straddling a boundary is missed.
                offset = next >= end || read <= 512 ? next : next - 512
            }
        }
        var line = 0
        while line < length {
            var end = line
            while end < length && maps[end] != 0x0A { end += 1 }
            defer { line = end + 1 }
            // START-END PERMS OFFSET DEV INODE [PATH], all parsed in place.
            var index = line
            func hex() -> UInt {
                var value: UInt = 0
                while index < end, let digit = hexDigit(maps[index]) { value = value << 4 | UInt(digit); index += 1 }
                return value
            }
            func skipField() {
                while index < end && maps[index] != 0x20 { index += 1 }
                while index < end && maps[index] == 0x20 { index += 1 }
            }
            let start = hex()
            index += 1
            let stop = hex()
            index += 1
            guard index + 1 < end, maps[index] == UInt8(ascii: "r"), maps[index + 1] == UInt8(ascii: "w") else { continue }
            for _ in 0..<4 { skipField() }
            let path = UnsafeRawBufferPointer(rebasing: maps[index..<end])
            func hasPrefix(_ prefix: StaticString) -> Bool {
                path.count >= prefix.utf8CodeUnitCount
                    && memcmp(path.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
            }
            guard path.isEmpty || hasPrefix("[heap]") || hasPrefix("[stack") || hasPrefix("[anon") else { continue }
            // The scan's own buffers are left out, even where the kernel merged them with a neighbouring mapping.
            if start < own.lowerBound { scanRange(start, min(stop, own.lowerBound)) }
            if stop > own.upperBound { scanRange(max(start, own.upperBound), stop) }
        }
        return results
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
