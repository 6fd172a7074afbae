#!/usr/bin/env bash
# Transaction signing speed: `keystore sign-tx --batch` over N typical payment envelopes (made by stellar-sdk),
# end to end with a session, beside what bounds it, both measured in the same run:
#   - libsodium's raw in-process Ed25519 signing loop (one core): the signature alone;
#   - stellar-sdk's parse-sign-serialise loop in Python (TransactionEnvelope.from_xdr, sign, to_xdr).
# Usage: bench/sign-tx.sh [N=100000] [PYTHON=python3 with stellar-sdk]
#   e.g. python3 -m venv /tmp/sdk && /tmp/sdk/bin/pip install 'stellar-sdk==16.*' && bench/sign-tx.sh 100000 /tmp/sdk/bin/python
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
PYTHON=${2:-python3}
source bench/build.sh
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/limits" bench/limits.c $(pkg-config --cflags --libs libsodium)

export KEYSTORE_HOME="$WORK/keys" XDG_RUNTIME_DIR="$WORK/run" STELLAR_NETWORK=testnet
mkdir -m 700 "$XDG_RUNTIME_DIR"
printf '503816\n' > "$WORK/pin"
chmod 600 "$WORK/pin"
ADDRESS=$("$KEYSTORE" signup --kdf interactive --pin-file "$WORK/pin")

# 1,000 distinct payments from this identity (memo, fee, time bounds as a wallet sets them), repeated to N
# requests; and stellar-sdk's own loop over 5,000 of them.
"$PYTHON" - "$ADDRESS" "$N" "$WORK" <<'PY'
import sys, time
from stellar_sdk import Account, Asset, Keypair, Network, TransactionBuilder, TransactionEnvelope
address, n, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
envelopes = []
for i in range(1000):
    destination = Keypair.from_raw_ed25519_seed(i.to_bytes(32, "big")).public_key
    tx = (TransactionBuilder(Account(address, 1000 + i), Network.TESTNET_NETWORK_PASSPHRASE, base_fee=100)
          .add_time_bounds(1700000000, 1700000300).add_text_memo(f"invoice {i}")
          .append_payment_op(destination, Asset.native(), f"{i + 1}.5").build())
    envelopes.append(tx.to_xdr())
with open(f"{work}/requests", "w") as f:
    for i in range(n):
        f.write('{"id":%d,"envelope":"%s"}\n' % (i, envelopes[i % 1000]))
signer = Keypair.random()
count = 5000
start = time.perf_counter()
for i in range(count):
    envelope = TransactionEnvelope.from_xdr(envelopes[i % 1000], Network.TESTNET_NETWORK_PASSPHRASE)
    envelope.sign(signer)
    envelope.to_xdr()
with open(f"{work}/sdk", "w") as f:
    f.write(str(count / (time.perf_counter() - start)))
PY

raw=$("$WORK/limits" sign "$N")
eval "$("$KEYSTORE" login --session --pin-file "$WORK/pin" --ttl 1h 2>/dev/null)"
export KEYSTORE_SESSION
start=$(date +%s.%N)
"$KEYSTORE" sign-tx --batch < "$WORK/requests" > "$WORK/results"
end=$(date +%s.%N)
lines=$(grep -c '"envelope"' "$WORK/results")
[ "$lines" -eq "$N" ] || { echo "expected $N signed envelopes, got $lines" >&2; exit 1; }
batch=$(echo "$N / ($end - $start)" | bc -l)
sdk=$(cat "$WORK/sdk")

ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
printf '%-56s %12s\n' "measure" "value"
printf '%-56s %12.0f sig/s\n' "libsodium raw signing loop (in-process, one core)" "$raw"
printf '%-56s %12.0f tx/s   %s× raw (goal: 0.5×)\n' "keystore sign-tx --batch, $N payments, session, e2e" "$batch" "$(ratio "$batch" "$raw")"
printf '%-56s %12.0f tx/s   keystore is %s× it\n' "stellar-sdk parse, sign, serialise (Python, one core)" "$sdk" "$(ratio "$batch" "$sdk")"
