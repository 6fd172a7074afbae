#!/usr/bin/env bash
# What socket activation costs the first request: `keystore agent list` as the connection that makes
# systemd-socket-activate start the agent (the agent's start-up included), beside the same command against an
# agent already running, and `keystore --version` (a process's start-up), measured in the same run. The install
# build (bench/build.sh). Median wall time of RUNS tries each; the cold start needs a new listener per try, so it
# is timed one try at a time with `date +%s%N` (the others with bench/limits.c's spawn loop, RUNS at once).
# Usage: bench/activation.sh [RUNS=30]     (needs systemd-socket-activate, from the systemd package)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-30}

source bench/build.sh
WORK=$(mktemp -d)
chmod 700 "$WORK"
LISTENER=""
trap '[ -n "$LISTENER" ] && kill "$LISTENER" 2>/dev/null; rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/limits" bench/limits.c $(pkg-config --cflags --libs libsodium)
SOCKET="$WORK/agent.sock"

listen() {
    systemd-socket-activate -l "$SOCKET" --fdname=agent "$KEYSTORE" agent --foreground >/dev/null 2>&1 &
    LISTENER=$!
    for _ in $(seq 500); do [ -S "$SOCKET" ] && return; sleep 0.01; done
    echo "bench/activation.sh: systemd-socket-activate made no socket" >&2; exit 1
}
stop() {
    "$KEYSTORE" agent stop --socket "$SOCKET" >/dev/null 2>&1
    wait "$LISTENER" 2>/dev/null || true
    LISTENER=""
    rm -f "$SOCKET"
}

cold=()
for _ in $(seq "$RUNS"); do
    listen
    start=$(date +%s%N)
    "$KEYSTORE" agent list --socket "$SOCKET" >/dev/null 2>&1
    end=$(date +%s%N)
    cold+=("$(echo "($end - $start) / 1000000" | bc -l)")
    stop
done
listen
"$KEYSTORE" agent list --socket "$SOCKET" >/dev/null 2>&1
warm=$("$WORK/limits" spawn "$RUNS" "$KEYSTORE" agent list --socket "$SOCKET" 2>/dev/null)
version=$("$WORK/limits" spawn "$RUNS" "$KEYSTORE" --version)
stop

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
cold=$(median "${cold[@]}")
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
printf '%-62s %8s\n' "measure (median of $RUNS)" "ms"
printf '%-62s %8.2f  %s× the same against a running agent, %s× --version\n' \
    "keystore agent list, the connection that starts the agent" "$cold" "$(ratio "$cold" "$warm")" "$(ratio "$cold" "$version")"
printf '%-62s %8.2f  %s× --version\n' "keystore agent list, agent running" "$warm" "$(ratio "$warm" "$version")"
printf '%-62s %8.2f\n' "  keystore --version (start-up)" "$version"
