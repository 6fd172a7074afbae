#!/usr/bin/env bash
# What the many-signers commands cost a script per call, beside their floor and stellar-sdk measured in the same
# run: `keystore combine-tx` of three signed copies of a payment (and with the account's JSON, --trim), `show-tx`
# with and without the account's JSON, against `keystore --version` (start-up) and a Python process that does the
# same combine with stellar-sdk 16.1.1 (parse the three copies, keep each signature once, write the envelope).
# Median wall time of RUNS spawns, three rounds, the commands taken in turn so that drift falls on each alike.
# Usage: bench/multisig.sh [RUNS=100]     (needs stellar-sdk 16.1.1 in ~/.cache/keystore-ci/stellar-sdk, as the tests make it)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-100}
PYTHON=${STELLAR_SDK_PYTHON:-$HOME/.cache/keystore-ci/stellar-sdk/bin/python}

source bench/build.sh
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/limits" bench/limits.c $(pkg-config --cflags --libs libsodium)
export KEYSTORE_HOME="$WORK/keys" STELLAR_NETWORK=testnet

# The three copies of the README's payment, each signed by one of the treasury's signers (by stellar-sdk), and the
# treasury's Horizon JSON.
"$PYTHON" - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
fixture = json.load(open("fixtures/readme-multisig.json"))
json.dump(fixture["treasuryAccount"], open(f"{work}/treasury.json", "w"))
for index, name in enumerate(["alice", "bob", "carol"]):
    open(f"{work}/copy{index}.xdr", "w").write(fixture["signed"][name] + "\n")
PY
cat > "$WORK/combine.py" <<'PY'
import sys
from stellar_sdk import Network, TransactionEnvelope
copies = [TransactionEnvelope.from_xdr(open(path).read().strip(), Network.TESTNET_NETWORK_PASSPHRASE) for path in sys.argv[1:]]
first, seen = copies[0], set()
signatures = []
for copy in copies:
    assert copy.hash() == first.hash()
    for signature in copy.signatures:
        key = (bytes(signature.signature_hint), bytes(signature.signature))
        if key not in seen:
            seen.add(key)
            signatures.append(signature)
first.signatures = signatures
print(first.to_xdr())
PY
COPIES=("$WORK/copy0.xdr" "$WORK/copy1.xdr" "$WORK/copy2.xdr")
# The same bytes from both, or the comparison means nothing.
[ "$("$KEYSTORE" combine-tx "${COPIES[@]}" 2>/dev/null)" = "$("$PYTHON" "$WORK/combine.py" "${COPIES[@]}")" ] \
    || { echo "bench/multisig.sh: keystore and stellar-sdk combine differently" >&2; exit 1; }

declare -A total
names=(combine trim show showfile version python)
for name in "${names[@]}"; do total[$name]=""; done
for round in 1 2 3; do
    # combine-tx says what it kept and removed on standard error, every run: kept out of the table.
    total[combine]+=" $("$WORK/limits" spawn "$RUNS" "$KEYSTORE" combine-tx "${COPIES[@]}" 2>"$WORK/notes")"
    total[trim]+=" $("$WORK/limits" spawn "$RUNS" "$KEYSTORE" combine-tx --account-file "$WORK/treasury.json" --trim "${COPIES[@]}" 2>"$WORK/notes")"
    total[show]+=" $("$WORK/limits" spawn "$RUNS" "$KEYSTORE" show-tx --file "$WORK/copy0.xdr")"
    total[showfile]+=" $("$WORK/limits" spawn "$RUNS" "$KEYSTORE" show-tx --account-file "$WORK/treasury.json" --file "$WORK/copy0.xdr")"
    total[version]+=" $("$WORK/limits" spawn "$RUNS" "$KEYSTORE" --version)"
    total[python]+=" $("$WORK/limits" spawn "$(( (RUNS + 9) / 10 ))" "$PYTHON" "$WORK/combine.py" "${COPIES[@]}")"
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | sed -n 2p; }
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
for name in "${names[@]}"; do declare "$name=$(median "${total[$name]}")"; done
printf '%-60s %8s\n' "measure (median of 3 rounds of $RUNS spawns)" "ms"
printf '%-60s %8s  %s× --version, %s× stellar-sdk\n' "keystore combine-tx, 3 copies" "$combine" "$(ratio "$combine" "$version")" "$(ratio "$combine" "$python")"
printf '%-60s %8s  %s× --version\n' "keystore combine-tx --account-file --trim, 3 copies" "$trim" "$(ratio "$trim" "$version")"
printf '%-60s %8s  %s× --version\n' "keystore show-tx" "$show" "$(ratio "$show" "$version")"
printf '%-60s %8s  %s× show-tx\n' "keystore show-tx --account-file" "$showfile" "$(ratio "$showfile" "$show")"
printf '%-60s %8s\n' "  keystore --version (start-up)" "$version"
printf '%-60s %8s\n' "  stellar-sdk 16.1.1 combine, one Python process" "$python"
