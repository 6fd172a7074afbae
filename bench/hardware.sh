#!/usr/bin/env bash
# What a key in hardware costs, beside a sealed vault and beside the limits measured in the same run, for four
# kinds of key: a sealed Ed25519 vault (--kdf interactive), the same bound to a TPM, an Ed25519 key in a PKCS#11
# token (SoftHSM2) and a P-256 key resident in a TPM (swtpm), which signs smart-account authorizations only.
#   - latency: median wall time of one signing process that is given the PIN (`keystore sign`, or `sign-auth`
#     for the P-256 key, with the Ed25519 TPM-bound vault signing the same envelope beside it), against
#     `keystore --version` (start-up), OpenSC's `pkcs11-tool --sign` through the same module, and tpm2-tools'
#     `tpm2_sign` with a persistent P-256 key of the same TPM; RUNS rounds, the commands taken in turn so that
#     the machine's drift falls on each alike. Every PIN here costs one Argon2id at --kdf interactive (the sealed
#     vault's row shows it), which the outside tools do not pay: the TPM's and the token's own share is the
#     difference to the sealed vault, not the ratio to the limit;
#   - signatures/s held by a signing agent for the sealed vault and for the token key (limits agent-rate: one
#     connection, one request at a time; two connections, 64 in flight each), against libsodium's raw loop and
#     SoftHSM2's own C_Sign loop in one process (one core each).
# Everything runs on a private swtpm and a private SoftHSM2 token in a temporary directory, removed on exit.
# SoftHSM2 and swtpm are software: a real HSM, YubiKey or TPM is much slower (measure a TPM with
# KEYSTORE_TPM_TCTI=device:/dev/tpmrm0 by hand; this script never touches it).
# Usage: bench/hardware.sh [RUNS=15] [N=5000]     (needs swtpm, tpm2-tools, softhsm2, opensc, libsodium-dev)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-15}
N=${2:-5000}
MODULE=/usr/lib/softhsm/libsofthsm2.so

source bench/build.sh
WORK=$(mktemp -d)
SWTPM= AGENTS=()
cleanup() {
    for pid in "${AGENTS[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
    [ -n "$SWTPM" ] && kill "$SWTPM" 2>/dev/null && wait "$SWTPM" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
# Runs a setup step with its notes (lockout code, signup hints) out of the table; shows them if it fails.
quietly() { "$@" >/dev/null 2>"$WORK/stderr" || { cat "$WORK/stderr" >&2; return 1; }; }
cc -O2 -pthread -o "$WORK/limits" bench/limits.c $(pkg-config --cflags --libs libsodium)

# SoftHSM2's own signing loop, in one process and one session: what the token costs without keystore, the
# agent or a process start. Prints signatures/s twice: with the key found once (its label: keystore labels a
# key it makes with the identity's name), and with a C_FindObjects before each signature, as keystore's
# PKCS11Session.sign does (by id), so that the share of that search is seen.
cat > "$WORK/p11loop.c" <<'C'
#include "CPKCS11.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: p11loop MODULE PIN LABEL N\n"); return 64; }
    void *module = dlopen(argv[1], RTLD_NOW);
    CK_C_GetFunctionList get = module ? (CK_C_GetFunctionList)dlsym(module, "C_GetFunctionList") : NULL;
    CK_FUNCTION_LIST_PTR p;
    CK_SLOT_ID slots[8];
    CK_ULONG count = 8, found = 0, length = 64;
    CK_SESSION_HANDLE session;
    CK_OBJECT_CLASS class = CKO_PRIVATE_KEY;
    CK_ATTRIBUTE template[] = {{CKA_CLASS, &class, sizeof class}, {CKA_LABEL, argv[3], strlen(argv[3])}};
    CK_OBJECT_HANDLE key;
    CK_MECHANISM mechanism = {CKM_EDDSA, NULL, 0};
    unsigned char payload[32] = {0}, signature[64];
    long n = atol(argv[4]);
    CK_OBJECT_HANDLE again;
    if (!get || get(&p) != CKR_OK || p->C_Initialize(NULL) != CKR_OK
        || p->C_GetSlotList(CK_TRUE, slots, &count) != CKR_OK || count < 1
        || p->C_OpenSession(slots[0], CKF_SERIAL_SESSION, NULL, NULL, &session) != CKR_OK
        || p->C_Login(session, CKU_USER, (CK_UTF8CHAR_PTR)argv[2], strlen(argv[2])) != CKR_OK
        || p->C_FindObjectsInit(session, template, 2) != CKR_OK
        || p->C_FindObjects(session, &key, 1, &found) != CKR_OK || found != 1) {
        fprintf(stderr, "p11loop: no key labelled %s in the token\n", argv[3]);
        return 1;
    }
    p->C_FindObjectsFinal(session);
    for (int find = 0; find < 2; find++) {
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (long i = 0; i < n; i++) {
            memcpy(payload, &i, sizeof i);
            length = sizeof signature;
            if (find && (p->C_FindObjectsInit(session, template, 2) != CKR_OK
                         || p->C_FindObjects(session, &again, 1, &found) != CKR_OK || found != 1
                         || p->C_FindObjectsFinal(session) != CKR_OK || again != key)) {
                fprintf(stderr, "p11loop: C_FindObjects failed\n");
                return 1;
            }
            if (p->C_SignInit(session, &mechanism, key) != CKR_OK
                || p->C_Sign(session, payload, sizeof payload, signature, &length) != CKR_OK || length != 64) {
                fprintf(stderr, "p11loop: C_Sign failed\n");
                return 1;
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &end);
        printf("%.0f ", n / (end.tv_sec - start.tv_sec + (end.tv_nsec - start.tv_nsec) / 1e9));
    }
    printf("\n");
    p->C_Logout(session);
    p->C_Finalize(NULL);
    return 0;
}
C
# keystore's own PKCS#11 header (written from the OASIS 3.0 specification), so that nothing more is installed.
cc -O2 -o "$WORK/p11loop" "$WORK/p11loop.c" -I Sources/CPKCS11/include -ldl

# A private swtpm, started as bench/tpm.sh starts it.
source bench/swtpm.sh
start_swtpm "$WORK/tpm"
sleep 0.5

# A private SoftHSM2 token. Its PINs are throwaway values of a throwaway token: pkcs11-tool and the C loop take
# the user PIN on their command line, keystore from a file.
mkdir "$WORK/softhsm"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n' \
    "$WORK/softhsm" > "$WORK/softhsm2.conf"
export SOFTHSM2_CONF="$WORK/softhsm2.conf"
TOKEN_PIN=4711-token
softhsm2-util --init-token --free --label bench --pin "$TOKEN_PIN" --so-pin 12345678 >/dev/null

export KEYSTORE_HOME="$WORK/keys" XDG_RUNTIME_DIR="$WORK/run" KEYSTORE_TPM_TCTI="swtpm:host=127.0.0.1,port=$PORT"
export TPM2TOOLS_TCTI="$KEYSTORE_TPM_TCTI"
mkdir -m 700 "$XDG_RUNTIME_DIR"
printf '503816\n' > "$WORK/pin"
printf '%s\n' "$TOKEN_PIN" > "$WORK/token-pin"
chmod 600 "$WORK/pin" "$WORK/token-pin"

# tpm2_sign's key: a P-256 ECDSA key under the owner's ECC primary, made persistent so that each tpm2_sign only
# signs (no load). Each tool leaves its objects loaded in swtpm (there is no resource manager, and only three
# object slots): flushed after each step.
flush() { tpm2_flushcontext -t; tpm2_flushcontext -s; }
tpm2_createprimary -Q -C o -g sha256 -G ecc256 -c "$WORK/primary.ctx" && flush
tpm2_create -Q -C "$WORK/primary.ctx" -G ecc256:ecdsa-sha256 -p str:503816 -u "$WORK/p256.pub" -r "$WORK/p256.priv" && flush
tpm2_load -Q -C "$WORK/primary.ctx" -u "$WORK/p256.pub" -r "$WORK/p256.priv" -c "$WORK/p256.ctx" && flush
tpm2_evictcontrol -Q -C o -c "$WORK/p256.ctx" 0x81000100 >/dev/null && flush
head -c 32 /dev/urandom > "$WORK/digest"
head -c 32 /dev/urandom > "$WORK/payload"

# A protected lockout, as keystore asks of a TPM before binding; the code dies with the throwaway swtpm.
quietly "$KEYSTORE" tpm-protect --print-code
quietly "$KEYSTORE" signup --name plain --kdf interactive --pin-file "$WORK/pin"
quietly "$KEYSTORE" signup --name tpm --tpm --kdf interactive --pin-file "$WORK/pin"
quietly "$KEYSTORE" signup --name hsm --pkcs11 "$MODULE" --pin-file "$WORK/token-pin"
KEY_ID=$(python3 -c 'import base64, json, sys; print(base64.b64decode(json.load(open(sys.argv[1]))["pkcs11"]["keyId"]).hex())' \
    "$KEYSTORE_HOME/hsm.vault")
P256=
if "$KEYSTORE" signup --help 2>&1 | grep -q -- '--p256'; then
    quietly "$KEYSTORE" signup --name p256 --tpm --p256 --kdf interactive --pin-file "$WORK/pin"
    P256=yes
fi

# Two agents, one key each, so that limits agent-rate (which names no address) signs with that key.
start_agent() { # NAME SOCKET PINFILE
    "$KEYSTORE" agent start --foreground --socket "$2" --log "$WORK/$1.log" >/dev/null 2>&1 &
    AGENTS+=($!)
    for _ in $(seq 100); do [ -S "$2" ] && break; sleep 0.05; done
    KEYSTORE_AGENT="$2" quietly "$KEYSTORE" login --agent --name "$1" --pin-file "$3"
}
start_agent plain "$WORK/plain.sock" "$WORK/pin"
start_agent hsm "$WORK/hsm.sock" "$WORK/token-pin"

python3 - "$KEYSTORE" "$WORK" "$RUNS" "$MODULE" "$TOKEN_PIN" "$KEY_ID" "$P256" <<'PY' > "$WORK/latency"
import json, os, statistics, subprocess, sys, time
keystore, work, runs, module, token_pin, key_id, p256 = sys.argv[1:8]
runs = int(runs)
fixture = json.load(open("fixtures/smart-account-envelopes.json"))
# The smart account's entries, signed as its External signer for one rule id per context (the fixture's).
auth = ["sign-auth", "--network", fixture["network"], "--expiration-ledger", str(fixture["expiration"]),
        "--account", fixture["smartAccount"], "--verifier", fixture["verifier"],
        "--context-rules", ",".join(map(str, fixture["rules"])), "--quiet", fixture["envelope"]]
zeros = "00" * 32
commands = {
    "version": [keystore, "--version"],
    "plain": [keystore, "sign", "--name", "plain", "--pin-file", f"{work}/pin", "--hex", zeros],
    "tpm": [keystore, "sign", "--name", "tpm", "--pin-file", f"{work}/pin", "--hex", zeros],
    "hsm": [keystore, "sign", "--name", "hsm", "--pin-file", f"{work}/token-pin", "--hex", zeros],
    "pkcs11-tool": ["pkcs11-tool", "--module", module, "--token-label", "bench", "--login", "--pin", token_pin,
                    "--sign", "--mechanism", "EDDSA", "--id", key_id, "-i", f"{work}/payload", "-o", f"{work}/out"],
    "tpm-auth": [keystore] + auth[:1] + ["--name", "tpm", "--pin-file", f"{work}/pin"] + auth[1:],
    "tpm2_sign": ["tpm2_sign", "-c", "0x81000100", "-p", "str:503816", "-g", "sha256", "-d", "-f", "plain",
                  "-o", f"{work}/tpm2.sig", f"{work}/digest"],
    "plain-agent": [keystore, "sign", "--name", "plain", "--hex", zeros],
    "hsm-agent": [keystore, "sign", "--name", "hsm", "--hex", zeros],
}
if p256:
    commands["p256"] = [keystore] + auth[:1] + ["--name", "p256", "--pin-file", f"{work}/pin"] + auth[1:]
environment = {"plain-agent": f"{work}/plain.sock", "hsm-agent": f"{work}/hsm.sock"}
def seconds(name):
    env = dict(os.environ)
    if name in environment:
        env["KEYSTORE_AGENT"] = environment[name]
    start = time.perf_counter()
    done = subprocess.run(commands[name], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{name} failed ({done.returncode}): {done.stderr.decode(errors='replace').strip()}")
    if name.endswith("-agent") and done.stderr:
        sys.exit(f"{name} did not sign through the agent: {done.stderr.decode(errors='replace').strip()}")
    return elapsed
times = {name: [] for name in commands}
for _ in range(runs):
    for name in commands:
        times[name].append(seconds(name))
for name, values in times.items():
    print(name, f"{statistics.median(values) * 1000:.1f}")
PY
declare -A ms
while read -r name value; do ms[$name]=$value; done < "$WORK/latency"

raw=$("$WORK/limits" sign 100000)
read -r p11 p11_find < <("$WORK/p11loop" "$MODULE" "$TOKEN_PIN" hsm "$N")
declare -A rate
for key in plain hsm; do
    read -r rate[$key-rtt] _ < <("$WORK/limits" agent "$WORK/$key.sock" "$N")
    rate[$key-1]=$("$WORK/limits" agent-rate "$WORK/$key.sock" "$N" 1 1)
    rate[$key-2]=$("$WORK/limits" agent-rate "$WORK/$key.sock" "$N" 2 64)
done

ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
printf '%-62s %10s\n' "one signing process with the PIN (median of $RUNS, $(nproc) cores)" "ms"
printf '%-62s %10s\n' "  keystore --version (start-up)" "${ms[version]}"
printf '%-62s %10s  %6s× --version\n' "sealed Ed25519 vault, --kdf interactive: sign" "${ms[plain]}" "$(ratio "${ms[plain]}" "${ms[version]}")"
printf '%-62s %10s  %6s× --version  %s× sealed\n' "the same, TPM-bound (swtpm): sign" "${ms[tpm]}" \
    "$(ratio "${ms[tpm]}" "${ms[version]}")" "$(ratio "${ms[tpm]}" "${ms[plain]}")"
printf '%-62s %10s  %6s× --version  %s× pkcs11-tool\n' "SoftHSM2 token key: sign" "${ms[hsm]}" \
    "$(ratio "${ms[hsm]}" "${ms[version]}")" "$(ratio "${ms[hsm]}" "${ms[pkcs11-tool]}")"
printf '%-62s %10s\n' "  pkcs11-tool --sign --mechanism EDDSA (same module, key)" "${ms[pkcs11-tool]}"
printf '%-62s %10s  %6s× --version\n' "TPM-bound Ed25519 vault: sign-auth, smart account, 2 contexts" "${ms[tpm-auth]}" \
    "$(ratio "${ms[tpm-auth]}" "${ms[version]}")"
if [ -n "$P256" ]; then
    printf '%-62s %10s  %6s× --version  %s× tpm2_sign  %s× Ed25519 TPM\n' "TPM P-256 key (swtpm): sign-auth, same envelope" "${ms[p256]}" \
        "$(ratio "${ms[p256]}" "${ms[version]}")" "$(ratio "${ms[p256]}" "${ms[tpm2_sign]}")" "$(ratio "${ms[p256]}" "${ms[tpm-auth]}")"
else
    printf '%-62s %10s\n' "TPM P-256 key: not measured (this keystore has no signup --p256)" "-"
fi
printf '%-62s %10s\n' "  tpm2_sign, persistent P-256 key, password session, no KDF" "${ms[tpm2_sign]}"
printf '%-62s %10s  %6s× --version\n' "sealed vault: sign through its agent, no PIN" "${ms[plain-agent]}" "$(ratio "${ms[plain-agent]}" "${ms[version]}")"
printf '%-62s %10s  %6s× --version\n' "SoftHSM2 key: sign through its agent, no PIN" "${ms[hsm-agent]}" "$(ratio "${ms[hsm-agent]}" "${ms[version]}")"
echo
printf '%-62s %10s\n' "signatures held by an agent ($N requests of 32 bytes)" "sig/s"
printf '%-62s %10.0f\n' "  libsodium raw loop (in-process, one core)" "$raw"
printf '%-62s %10.0f  %6s× libsodium\n' "  SoftHSM2 C_Sign loop (in-process, one session)" "$p11" "$(ratio "$p11" "$raw")"
printf '%-62s %10.0f  %6s× C_Sign loop\n' "  the same with a C_FindObjects before each (as keystore)" "$p11_find" "$(ratio "$p11_find" "$p11")"
printf '%-62s %10.0f  %6s× libsodium   (round trip %s ms)\n' "sealed vault, 1 connection, one request at a time" "${rate[plain-1]}" \
    "$(ratio "${rate[plain-1]}" "$raw")" "${rate[plain-rtt]}"
printf '%-62s %10.0f  %6s× libsodium\n' "sealed vault, 2 connections, 64 in flight each" "${rate[plain-2]}" "$(ratio "${rate[plain-2]}" "$raw")"
printf '%-62s %10.0f  %6s× C_Sign loop (round trip %s ms)\n' "SoftHSM2 key, 1 connection, one request at a time" "${rate[hsm-1]}" \
    "$(ratio "${rate[hsm-1]}" "$p11")" "${rate[hsm-rtt]}"
printf '%-62s %10.0f  %6s× C_Sign loop\n' "SoftHSM2 key, 2 connections, 64 in flight each" "${rate[hsm-2]}" "$(ratio "${rate[hsm-2]}" "$p11")"
echo
echo "SoftHSM2 and swtpm are software, on this CPU: a real HSM, YubiKey or TPM is slower, often by far (a TPM's"
echo "ECDSA P-256 signature typically takes tens of ms, a YubiKey's Ed25519 tens to a hundred; an HSM's depends on"
echo "its model and load). For the TPM itself: KEYSTORE_TPM_TCTI=device:/dev/tpmrm0 keystore … by hand."
