# Sourced by the benchmarks: builds the README's install build (static Swift runtime, linked by the toolchain's
# lld with packed relative relocations and unused sections dropped: smaller, and faster to start than the default
# gold link; none of its own symbols exported, which nothing loads against; every symbol bound at start, -z now,
# for full RELRO; no $ORIGIN run path, so libcurl and tpm2-tss never come from beside the binary) and sets
# KEYSTORE to the binary.
BUILD=(swift build -c release --static-swift-stdlib --disable-local-rpath -Xswiftc -use-ld=lld
       -Xlinker -z -Xlinker pack-relative-relocs -Xlinker -z -Xlinker now -Xlinker --gc-sections
       -Xlinker --no-export-dynamic)
"${BUILD[@]}" --product keystore >/dev/null
KEYSTORE=$("${BUILD[@]}" --show-bin-path)/keystore
