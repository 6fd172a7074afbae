#!/usr/bin/env bash
# The signing agent's speed, beside the limits measured in the same run:
#   - one signPayload round trip over the agent's socket (median and 99th percentile of N, from a C client),
#     against `keystore sign` with a session, one process per signature, and `minisign -S`;
#   - signatures/s through the agent with 1 and 2 client connections, each waiting for every answer before the
#     next request, and with up to 64 requests in flight per connection, against libsodium's raw loop (one core).
# The agent logs every request (to a file here), as it always does.
# Usage: bench/agent.sh [N=20000] [RUNS=200]     (needs minisign: apt-get install minisign)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}
RUNS=${2:-200}

source bench/build.sh
WORK=$(mktemp -d)
AGENT_PID=
cleanup() {
    [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
cc -O2 -pthread -o "$WORK/limits" bench/limits.c $(pkg-config --cflags --libs libsodium)

export KEYSTORE_HOME="$WORK/keys" XDG_RUNTIME_DIR="$WORK/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
printf '503816\n' > "$WORK/pin"
chmod 600 "$WORK/pin"
"$KEYSTORE" signup --kdf interactive --pin-file "$WORK/pin" >/dev/null
SOCKET="$XDG_RUNTIME_DIR/keystore/agent.sock"
"$KEYSTORE" agent start --foreground --log "$WORK/agent.log" >/dev/null 2>&1 &
AGENT_PID=$!
for _ in $(seq 100); do [ -S "$SOCKET" ] && break; sleep 0.05; done
"$KEYSTORE" login --agent --pin-file "$WORK/pin" 2>/dev/null >/dev/null

raw=$("$WORK/limits" sign 100000)
read -r median p99 < <("$WORK/limits" agent "$SOCKET" "$N")
one=$("$WORK/limits" agent-rate "$SOCKET" "$N" 1 1)
two=$("$WORK/limits" agent-rate "$SOCKET" "$N" 2 1)
one_window=$("$WORK/limits" agent-rate "$SOCKET" "$N" 1 64)
two_window=$("$WORK/limits" agent-rate "$SOCKET" "$N" 2 64)

eval "$("$KEYSTORE" login --session --pin-file "$WORK/pin" --ttl 1h 2>/dev/null)"
export KEYSTORE_SESSION
head -c 32 /dev/urandom > "$WORK/payload"
minisign -G -W -p "$WORK/minisign.pub" -s "$WORK/minisign.key" >/dev/null
session=$("$WORK/limits" spawn "$RUNS" "$KEYSTORE" sign --hex 0000000000000000000000000000000000000000000000000000000000000000)
minisign=$("$WORK/limits" spawn "$RUNS" minisign -S -s "$WORK/minisign.key" -m "$WORK/payload" -x "$WORK/payload.minisig")
unset KEYSTORE_SESSION
through=$(KEYSTORE_AGENT="$SOCKET" "$WORK/limits" spawn "$RUNS" "$KEYSTORE" sign --hex 0000000000000000000000000000000000000000000000000000000000000000)
logged=$(grep -c ' signPayload ' "$WORK/agent.log")

ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
printf '%-58s %12s\n' "measure ($(nproc) cores)" "value"
printf '%-58s %12s ms    %s× faster than a session process\n' "agent signPayload round trip, median of $N" "$median" "$(ratio "$session" "$median")"
printf '%-58s %12s ms\n' "agent signPayload round trip, 99th percentile" "$p99"
printf '%-58s %12s ms\n' "  keystore sign with a session, a process per call" "$session"
printf '%-58s %12s ms\n' "  minisign -S, a process per call" "$minisign"
printf '%-58s %12s ms\n' "  keystore sign through the agent, a process per call" "$through"
printf '%-58s %12.0f sig/s\n' "libsodium raw loop (in-process, one core)" "$raw"
printf '%-58s %12.0f sig/s  %s× raw\n' "agent, 1 connection, one request at a time" "$one" "$(ratio "$one" "$raw")"
printf '%-58s %12.0f sig/s  %s× raw\n' "agent, 2 connections, one request at a time each" "$two" "$(ratio "$two" "$raw")"
printf '%-58s %12.0f sig/s  %s× raw\n' "agent, 1 connection, 64 requests in flight" "$one_window" "$(ratio "$one_window" "$raw")"
printf '%-58s %12.0f sig/s  %s× raw\n' "agent, 2 connections, 64 requests in flight each" "$two_window" "$(ratio "$two_window" "$raw")"
printf '%-58s %12s\n' "requests in the agent's log" "$logged"
