#!/usr/bin/env bash
# Signing speed, start-up, memory and size of keystore, each beside the limits measured in the same run:
#   - libsodium's raw in-process signing loop (one core), against `keystore sign --batch` end to end;
#   - one `keystore sign` with a session, against `minisign -S` and `ssh-keygen -Y sign` (unencrypted keys),
#     a static Swift hello world and /bin/true, all spawned the same way (median wall time of RUNS calls);
#   - peak RSS of `login` and of a session `sign`; the stripped size of the release binary.
# Usage: bench/sign.sh [N=100000] [RUNS=200]     (needs minisign and ssh-keygen: apt-get install minisign)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
RUNS=${2:-200}

source bench/build.sh
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/limits" bench/limits.c $(pkg-config --cflags --libs libsodium)
printf 'print("hello")\n' > "$WORK/hello.swift"
swiftc -O -static-stdlib "$WORK/hello.swift" -o "$WORK/hello" 2>/dev/null
strip -o "$WORK/keystore-stripped" "$KEYSTORE"

export KEYSTORE_HOME="$WORK/keys" XDG_RUNTIME_DIR="$WORK/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
printf '503816\n' > "$WORK/pin"
chmod 600 "$WORK/pin"
"$KEYSTORE" signup --kdf interactive --pin-file "$WORK/pin" >/dev/null
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
cat "$WORK/pin" "$WORK/requests" | "$KEYSTORE" sign --batch --pin-stdin > "$WORK/results"
end=$(date +%s.%N)
lines=$(wc -l < "$WORK/results")
[ "$lines" -eq "$N" ] || { echo "expected $N results, got $lines" >&2; exit 1; }
batch=$(echo "$N / ($end - $start)" | bc -l)

eval "$("$KEYSTORE" login --session --pin-file "$WORK/pin" --ttl 1h 2>/dev/null)"
export KEYSTORE_SESSION
start=$(date +%s.%N)
"$KEYSTORE" sign --batch < "$WORK/requests" > "$WORK/results"
end=$(date +%s.%N)
session_batch=$(echo "$N / ($end - $start)" | bc -l)

head -c 32 /dev/urandom > "$WORK/payload"
minisign -G -W -p "$WORK/minisign.pub" -s "$WORK/minisign.key" >/dev/null
ssh-keygen -q -t ed25519 -N '' -f "$WORK/ssh_key"
session=$("$WORK/limits" spawn "$RUNS" "$KEYSTORE" sign --hex 0000000000000000000000000000000000000000000000000000000000000000)
minisign=$("$WORK/limits" spawn "$RUNS" minisign -S -s "$WORK/minisign.key" -m "$WORK/payload" -x "$WORK/payload.minisig")
ssh=$("$WORK/limits" spawn "$RUNS" ssh-keygen -Y sign -q -f "$WORK/ssh_key" -n file)
version=$("$WORK/limits" spawn "$RUNS" "$KEYSTORE" --version)
hello=$("$WORK/limits" spawn "$RUNS" "$WORK/hello")
true_=$("$WORK/limits" spawn "$RUNS" /bin/true)
login_rss=$("$WORK/limits" rss "$KEYSTORE" login --pin-file "$WORK/pin")
sign_rss=$("$WORK/limits" rss "$KEYSTORE" sign --hex 00)

ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
printf '%-50s %12s\n' "measure" "value"
printf '%-50s %12.0f sig/s\n' "libsodium raw loop (in-process, one core)" "$raw"
printf '%-50s %12.0f sig/s  %s× raw\n' "keystore sign --batch ($N requests, e2e)" "$batch" "$(ratio "$batch" "$raw")"
printf '%-50s %12.0f sig/s  %s× raw\n' "keystore sign --batch with a session" "$session_batch" "$(ratio "$session_batch" "$raw")"
printf '%-50s %12s ms    %s× minisign\n' "keystore sign with a session (median of $RUNS)" "$session" "$(ratio "$session" "$minisign")"
printf '%-50s %12s ms\n' "  minisign -S" "$minisign"
printf '%-50s %12s ms    %s× minisign\n' "  ssh-keygen -Y sign" "$ssh" "$(ratio "$ssh" "$minisign")"
printf '%-50s %12s ms    %s× hello\n' "keystore --version" "$version" "$(ratio "$version" "$hello")"
printf '%-50s %12s ms\n' "  static Swift hello world" "$hello"
printf '%-50s %12s ms\n' "  /bin/true" "$true_"
printf '%-50s %12s MiB\n' "peak RSS: keystore login (interactive, 64 MiB)" "$(echo "$login_rss / 1024" | bc)"
printf '%-50s %12s MiB\n' "peak RSS: keystore sign with a session" "$(echo "$sign_rss / 1024" | bc)"
printf '%-50s %12s MB\n' "keystore binary, release, static, stripped" "$(echo "scale=1; $(stat -c %s "$WORK/keystore-stripped") / 1000000" | bc)"
