#!/usr/bin/env bash
# What one process per signature costs, beside its floor measured in the same run: `keystore sign` with a
# session and `keystore --version`, against a static swift-argument-parser program with one option (built the
# same way, bench/argparser-hello), a static Swift hello world and /bin/true. Median wall time of RUNS spawns,
# the commands taken in turn so that drift falls on all of them.
# Usage: bench/startup.sh [RUNS=300]
# STARTUP_FIFO=1 spawns every command at real-time priority (chrt -f 1, as root): on a machine other jobs keep
# busy, a process otherwise waits for the scheduler's tick and the medians are multiples of it (4 ms at 250 Hz),
# not start-up costs. Every command is spawned the same way, so the ratios stay fair.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-300}

source bench/build.sh
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"${BUILD[@]}" --package-path bench/argparser-hello --scratch-path "$WORK/hello-build" --product hello >/dev/null
ARGPARSER=$("${BUILD[@]}" --package-path bench/argparser-hello --scratch-path "$WORK/hello-build" --show-bin-path)/hello
rm -f bench/argparser-hello/Package.resolved
cc -O2 -o "$WORK/limits" bench/limits.c $(pkg-config --cflags --libs libsodium)
printf 'print("hello")\n' > "$WORK/hello.swift"
swiftc -O -static-stdlib "$WORK/hello.swift" -o "$WORK/hello" 2>/dev/null

export KEYSTORE_HOME="$WORK/keys" XDG_RUNTIME_DIR="$WORK/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
printf '503816\n' > "$WORK/pin"
chmod 600 "$WORK/pin"
"$KEYSTORE" signup --kdf interactive --pin-file "$WORK/pin" >/dev/null 2>&1
eval "$("$KEYSTORE" login --session --pin-file "$WORK/pin" --ttl 1h 2>/dev/null)"
export KEYSTORE_SESSION

SPAWN=("$WORK/limits" spawn "$RUNS")
[[ ${STARTUP_FIFO:-} == 1 ]] && SPAWN=(chrt -f 1 "${SPAWN[@]}")

declare -A total
names=(sign version argparser hello true)
for name in "${names[@]}"; do total[$name]=""; done
for round in 1 2 3; do
    total[sign]+=" $("${SPAWN[@]}" "$KEYSTORE" sign --hex 0000000000000000000000000000000000000000000000000000000000000000)"
    total[version]+=" $("${SPAWN[@]}" "$KEYSTORE" --version)"
    total[argparser]+=" $("${SPAWN[@]}" "$ARGPARSER" --name keystore)"
    total[hello]+=" $("${SPAWN[@]}" "$WORK/hello")"
    total[true]+=" $("${SPAWN[@]}" /bin/true)"
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | sed -n 2p; }
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
sign=$(median "${total[sign]}"); version=$(median "${total[version]}"); argparser=$(median "${total[argparser]}")
hello=$(median "${total[hello]}"); true_=$(median "${total[true]}")
printf '%-52s %9s\n' "measure (median of 3 rounds of $RUNS spawns)" "ms"
printf '%-52s %9s  %s× argument-parser\n' "keystore sign with a session" "$sign" "$(ratio "$sign" "$argparser")"
printf '%-52s %9s  %s× argument-parser\n' "keystore --version" "$version" "$(ratio "$version" "$argparser")"
printf '%-52s %9s\n' "  static argument-parser program, one option" "$argparser"
printf '%-52s %9s\n' "  static Swift hello world" "$hello"
printf '%-52s %9s\n' "  /bin/true" "$true_"
