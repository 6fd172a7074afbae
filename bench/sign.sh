#!/usr/bin/env bash
# Signing throughput and latency of keystore against the limits measured in the same run:
#   1. libsodium's raw in-process signing loop (signatures/s)
#   2. keystore sign --batch end to end, one unlock, N requests (signatures/s), and its ratio to 1.
#   3. keystore sign with an open session: median wall time per call over RUNS calls, beside the median of
#      spawning /bin/true (the floor for any process) and keystore --version (the floor for this binary).
# Usage: bench/sign.sh [N=100000] [RUNS=200]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
RUNS=${2:-200}

swift build -c release --static-swift-stdlib --product keystore >/dev/null
KEYSTORE=$(swift build -c release --static-swift-stdlib --show-bin-path)/keystore
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/limits" bench/limits.c $(pkg-config --cflags --libs libsodium)

export KEYSTORE_HOME="$WORK/keys" XDG_RUNTIME_DIR="$WORK/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
printf '503816\n' | "$KEYSTORE" signup --kdf interactive --pin-stdin >/dev/null
# 32-byte payloads, like transaction hashes: the same work per signature as the raw loop.
python3 -c "
import os, base64
with open('$WORK/requests', 'w') as f:
    for i in range($N):
        f.write('{\"id\":%d,\"base64\":\"%s\"}\n' % (i, base64.b64encode(os.urandom(32)).decode()))
"

raw=$("$WORK/limits" sign "$N")
# The batch includes its one unlock (Argon2id at the interactive cost) and process start-up.
start=$(date +%s.%N)
printf '503816\n' | cat - "$WORK/requests" | "$KEYSTORE" sign --batch --pin-stdin > "$WORK/results"
end=$(date +%s.%N)
lines=$(wc -l < "$WORK/results")
[ "$lines" -eq "$N" ] || { echo "expected $N results, got $lines" >&2; exit 1; }
batch=$(echo "$N / ($end - $start)" | bc -l)

eval "$(printf '503816\n' | "$KEYSTORE" login --session --pin-stdin --ttl 1h 2>/dev/null)"
export KEYSTORE_SESSION
start=$(date +%s.%N)
"$KEYSTORE" sign --batch < "$WORK/requests" > "$WORK/results"
end=$(date +%s.%N)
session_batch=$(echo "$N / ($end - $start)" | bc -l)
session=$("$WORK/limits" spawn "$RUNS" "$KEYSTORE" sign --hex 0000000000000000000000000000000000000000000000000000000000000000)
version=$("$WORK/limits" spawn "$RUNS" "$KEYSTORE" --version)
true_=$("$WORK/limits" spawn "$RUNS" /bin/true)

printf '%-44s %12s\n' "measure" "value"
printf '%-44s %12.0f sig/s\n' "libsodium raw loop (in-process, limit)" "$raw"
printf '%-44s %12.0f sig/s\n' "keystore sign --batch ($N requests, e2e)" "$batch"
printf '%-44s %12.3f\n' "  ratio batch / raw" "$(echo "$batch / $raw" | bc -l)"
printf '%-44s %12.0f sig/s\n' "keystore sign --batch with a session" "$session_batch"
printf '%-44s %12.3f\n' "  ratio session batch / raw" "$(echo "$session_batch / $raw" | bc -l)"
printf '%-44s %12s ms\n' "keystore sign with session (median of $RUNS)" "$session"
printf '%-44s %12s ms\n' "  floor: keystore --version" "$version"
printf '%-44s %12s ms\n' "  floor: /bin/true" "$true_"
