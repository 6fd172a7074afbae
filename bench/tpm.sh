#!/usr/bin/env bash
# What binding a vault to a TPM costs a login: `keystore login` on a TPM-bound vault against the same login on an
# unbound one, at --kdf interactive and moderate, median wall time of RUNS logins each, on a private swtpm
# (a software TPM: a hardware TPM is slower, so measure yours with KEYSTORE_TPM_TCTI=device:/dev/tpmrm0).
# The difference is the TPM's share: create the primary key, a salted session, load, unseal, flush.
# Usage: bench/tpm.sh [RUNS=21]     (needs swtpm: apt-get install swtpm swtpm-tools)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-21}

source bench/build.sh
WORK=$(mktemp -d)
source bench/swtpm.sh
start_swtpm "$WORK/tpm"
trap 'kill $SWTPM; rm -rf "$WORK"' EXIT
sleep 0.5

export KEYSTORE_HOME="$WORK/keys" KEYSTORE_TPM_TCTI="swtpm:host=127.0.0.1,port=$PORT"
printf '503816\n' > "$WORK/pin"
chmod 600 "$WORK/pin"
# A protected lockout, as keystore asks of a TPM before binding; the code dies with the throwaway swtpm.
"$KEYSTORE" tpm-protect --print-code >/dev/null
for kdf in interactive moderate; do
    "$KEYSTORE" signup --name "plain-$kdf" --kdf "$kdf" --pin-file "$WORK/pin" >/dev/null
    "$KEYSTORE" signup --name "tpm-$kdf" --tpm --kdf "$kdf" --pin-file "$WORK/pin" >/dev/null 2>&1
done

python3 - "$KEYSTORE" "$WORK/pin" "$RUNS" <<'PY'
import statistics, subprocess, sys, time
keystore, pin, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def seconds(arguments):
    start = time.perf_counter()
    subprocess.run([keystore] + arguments, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start
def medians_ms(*commands):
    """The commands run in turn, RUNS rounds, so that the machine's drift falls on each alike."""
    times = [[] for _ in commands]
    for _ in range(runs):
        for index, arguments in enumerate(commands):
            times[index].append(seconds(arguments))
    return [statistics.median(t) * 1000 for t in times]
status, = medians_ms(["tpm-status"])
print(f"keystore tpm-status (connect, one GetCapability): {status:7.1f} ms")
for kdf in ("interactive", "moderate"):
    plain, bound = medians_ms(["login", "--name", f"plain-{kdf}", "--pin-file", pin],
                              ["login", "--name", f"tpm-{kdf}", "--pin-file", pin])
    print(f"login --kdf {kdf:11}  unbound {plain:7.1f} ms   TPM-bound {bound:7.1f} ms   "
          f"TPM's share {bound - plain:6.1f} ms ({(bound - plain) / bound:4.0%} of the bound login; goal: at most 300 ms)")
PY
