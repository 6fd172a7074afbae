# Sourced by the benchmarks that need a TPM: start_swtpm DIR starts a private swtpm (a software TPM, state in
# DIR) on two free loopback ports, and sets PORT and SWTPM (its pid); the caller's EXIT trap kills "$SWTPM".
start_swtpm() {
    PORT=$(python3 -c '
import random, socket
while True:
    port = random.randint(20000, 60000)
    try:
        for p in (port, port + 1):
            s = socket.socket(); s.bind(("127.0.0.1", p)); s.close()
        print(port); break
    except OSError:
        pass')
    mkdir "$1"
    swtpm socket --tpm2 --tpmstate dir="$1" --server type=tcp,port="$PORT",bindaddr=127.0.0.1 \
        --ctrl type=tcp,port=$((PORT + 1)),bindaddr=127.0.0.1 --flags not-need-init,startup-clear &
    SWTPM=$!
}
