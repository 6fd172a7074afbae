#!/usr/bin/env bash
# The signing agent's speed, beside the limits measured in the same run:
#   - one signPayload round trip over the agent's socket (median and 99th percentile of N, from a C client),
#     against `keystore sign` with a session, one process per signature, and `minisign -S`;
#   - signatures/s through the agent with 1 and 2 client connections, each waiting for every answer before the
#     next request, and with up to 64 requests in flight per connection, against libsodium's raw loop (one core).
#   - the same signPayload round trip through a second agent, started with a ten-rule policy (nine rules for other
#     callers before the one that allows this client's executable: the rule the agent reaches last), beside the
#     agent without one, in the same run (issue 44: the policy adds at most 10%).
# The agent logs every request (to a file here), as it always does.
#   - a signTransaction round trip (a payment made by stellar-sdk, from the identity), with and without the policy;
#     under it the payment is counted against a daily cap, so each one is recorded durably in the windows file
#     before the signature leaves; under a third agent, whose rule caps each payment but keeps no window, the
#     policy's decision alone; and beside them one durable write of a small file (temporary file, fsync, rename,
#     directory fsync), what a counted spend adds.
# Usage: bench/agent.sh [N=20000] [RUNS=200] [PYTHON=python3 with stellar-sdk]     (needs minisign: apt-get install minisign)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}
RUNS=${2:-200}
PYTHON=${3:-python3}

source bench/build.sh
WORK=$(mktemp -d)
AGENT_PID=
POLICY_AGENT_PID=
REQUEST_CAP_AGENT_PID=
cleanup() {
    [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
    [ -n "$POLICY_AGENT_PID" ] && kill "$POLICY_AGENT_PID" 2>/dev/null && wait "$POLICY_AGENT_PID" 2>/dev/null
    [ -n "$REQUEST_CAP_AGENT_PID" ] && kill "$REQUEST_CAP_AGENT_PID" 2>/dev/null && wait "$REQUEST_CAP_AGENT_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
cc -O2 -pthread -o "$WORK/limits" bench/limits.c $(pkg-config --cflags --libs libsodium)

export KEYSTORE_HOME="$WORK/keys" XDG_RUNTIME_DIR="$WORK/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
printf '503816\n' > "$WORK/pin"
chmod 600 "$WORK/pin"
ADDRESS=$("$KEYSTORE" signup --kdf interactive --pin-file "$WORK/pin")
# One payment from the identity, as a wallet makes it, in the request line signTransaction sends.
"$PYTHON" - "$ADDRESS" > "$WORK/transaction" <<'PY'
import json, sys
from stellar_sdk import Account, Asset, Keypair, Network, TransactionBuilder
tx = (TransactionBuilder(Account(sys.argv[1], 1000), Network.TESTNET_NETWORK_PASSPHRASE, base_fee=100)
      .add_time_bounds(1700000000, 1700000300).add_text_memo("invoice 1")
      .append_payment_op(Keypair.from_raw_ed25519_seed(bytes(32)).public_key, Asset.native(), "1.5").build())
print(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "signTransaction",
                  "params": {"xdr": tx.to_xdr(), "networkPassphrase": Network.TESTNET_NETWORK_PASSPHRASE}}))
PY
SOCKET="$XDG_RUNTIME_DIR/keystore/agent.sock"
"$KEYSTORE" agent start --foreground --log "$WORK/agent.log" >/dev/null 2>&1 &
AGENT_PID=$!
for _ in $(seq 100); do [ -S "$SOCKET" ] && break; sleep 0.05; done
"$KEYSTORE" login --agent --pin-file "$WORK/pin" 2>/dev/null >/dev/null

# The same agent with a ten-rule policy, on a socket of its own. $1: how the rule that allows this client's
# payments caps them.
policy() {
    printf '{"version": 1, "rules": [\n'
    # Other callers' rules, half for payloads (which take no limits), half for capped payments.
    for n in $(seq 8); do
        if [ $((n % 2)) -eq 1 ]; then
            printf '{"name": "other-%d", "callers": [{"executable": "%s/bot-%d"}], "kinds": ["payload"]},\n' "$n" "$WORK" "$n"
        else
            printf '{"name": "other-%d", "callers": [{"executable": "%s/bot-%d"}], "kinds": ["transaction"],' "$n" "$WORK" "$n"
            printf ' "operations": ["payment"], "limits": [{"asset": "native", "perWindow": "100", "window": "24h"}], "expiresWithin": "1h"},\n'
        fi
    done
    printf '{"name": "bench-payments", "callers": [{"executable": "%s"}], "kinds": ["transaction"],' "$WORK/limits"
    printf ' "operations": ["payment"], %s},\n' "$1"
    printf '{"name": "bench", "callers": [{"executable": "%s"}], "kinds": ["payload"]}\n]}\n' "$WORK/limits"
}
# $1: the socket, $2: the policy file, $3: the log. Prints the agent's process id.
start_policy_agent() {
    chmod 600 "$2"
    "$KEYSTORE" agent start --foreground --socket "$1" --policy "$2" --log "$3" >/dev/null 2>&1 &
    echo $!
}
# The other callers' programs: an agent does not start with a rule naming an executable no file is at.
for n in $(seq 8); do cp /bin/true "$WORK/bot-$n"; done
POLICY_SOCKET="$XDG_RUNTIME_DIR/keystore/agent-policy.sock"
REQUEST_CAP_SOCKET="$XDG_RUNTIME_DIR/keystore/agent-request-cap.sock"
policy '"limits": [{"asset": "native", "perWindow": "1000000000", "window": "24h"}], "expiresWithin": "1h"' > "$WORK/policy.json"
policy '"limits": [{"asset": "native", "perRequest": "1000000000"}]' > "$WORK/policy-request-cap.json"
POLICY_AGENT_PID=$(start_policy_agent "$POLICY_SOCKET" "$WORK/policy.json" "$WORK/agent-policy.log")
REQUEST_CAP_AGENT_PID=$(start_policy_agent "$REQUEST_CAP_SOCKET" "$WORK/policy-request-cap.json" "$WORK/agent-request-cap.log")
for socket in "$POLICY_SOCKET" "$REQUEST_CAP_SOCKET"; do
    for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.05; done
    KEYSTORE_AGENT="$socket" "$KEYSTORE" login --agent --pin-file "$WORK/pin" 2>/dev/null >/dev/null
done

raw=$("$WORK/limits" sign 100000)
read -r median p99 < <("$WORK/limits" agent "$SOCKET" "$N")
read -r policy_median policy_p99 < <("$WORK/limits" agent "$POLICY_SOCKET" "$N")
TX_N=$((N / 10))
read -r tx_median _ < <("$WORK/limits" agent "$SOCKET" "$TX_N" "$WORK/transaction")
read -r policy_tx_median _ < <("$WORK/limits" agent "$POLICY_SOCKET" "$TX_N" "$WORK/transaction")
read -r request_cap_tx_median _ < <("$WORK/limits" agent "$REQUEST_CAP_SOCKET" "$TX_N" "$WORK/transaction")
durable_write=$("$WORK/limits" durable-write "$KEYSTORE_HOME" "$TX_N")
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
printf '%-58s %12s ms    %s× the agent without one\n' "  with a ten-rule policy, median of $N" "$policy_median" "$(ratio "$policy_median" "$median")"
printf '%-58s %12s ms\n' "  with a ten-rule policy, 99th percentile" "$policy_p99"
printf '%-58s %12s ms\n' "agent signTransaction round trip (a payment), median of $TX_N" "$tx_median"
printf '%-58s %12s ms    %s× the agent without one\n' "  with the policy, the payment counted in its window" "$policy_tx_median" "$(ratio "$policy_tx_median" "$tx_median")"
printf '%-58s %12s ms    %s× the agent without one\n' "  with the policy, the payment capped but kept in no window" "$request_cap_tx_median" "$(ratio "$request_cap_tx_median" "$tx_median")"
printf '%-58s %12s ms    (the window adds %s ms)\n' "  one durable write of a small file, median of $TX_N" "$durable_write" "$(printf '%.4f' "$(echo "$policy_tx_median - $tx_median" | bc -l)")"
printf '%-58s %12s ms\n' "  keystore sign with a session, a process per call" "$session"
printf '%-58s %12s ms\n' "  minisign -S, a process per call" "$minisign"
printf '%-58s %12s ms\n' "  keystore sign through the agent, a process per call" "$through"
printf '%-58s %12.0f sig/s\n' "libsodium raw loop (in-process, one core)" "$raw"
printf '%-58s %12.0f sig/s  %s× raw\n' "agent, 1 connection, one request at a time" "$one" "$(ratio "$one" "$raw")"
printf '%-58s %12.0f sig/s  %s× raw\n' "agent, 2 connections, one request at a time each" "$two" "$(ratio "$two" "$raw")"
printf '%-58s %12.0f sig/s  %s× raw\n' "agent, 1 connection, 64 requests in flight" "$one_window" "$(ratio "$one_window" "$raw")"
printf '%-58s %12.0f sig/s  %s× raw\n' "agent, 2 connections, 64 requests in flight each" "$two_window" "$(ratio "$two_window" "$raw")"
printf '%-58s %12s\n' "requests in the agent's log" "$logged"
