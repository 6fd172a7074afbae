#!/usr/bin/env bash
# What backing up and restoring N identities costs, beside Debian's age encrypting and decrypting the same bundle in
# the same run, with the cost that is the PINs' own (Argon2id at --kdf interactive: one derivation per identity to
# back it up, two to restore it, sealing the new vault and opening it for the probe) measured apart by libsodium
# itself. What is left is keystore's own: start-up, age, the bundle, the checks, the writes.
# Usage: bench/backup.sh [N=100]     (needs Debian's age)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100}

source bench/build.sh
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/limits" bench/limits.c $(pkg-config --cflags --libs libsodium)
printf '503816\n' > "$WORK/pin"
chmod 600 "$WORK/pin"
export KEYSTORE_HOME="$WORK/source"
for i in $(seq 1 "$N"); do
    "$KEYSTORE" signup --name "id$i" --kdf interactive --pin-file "$WORK/pin" >/dev/null 2>&1
done
age-keygen -o "$WORK/key.txt" 2>/dev/null
RECIPIENT=$(age-keygen -y "$WORK/key.txt")
ms() { local start end; start=$(date +%s%N); "$@" >/dev/null 2>&1; end=$(date +%s%N); echo $(( (end - start) / 1000000 )); }

backup=$(ms "$KEYSTORE" backup --recipient "$RECIPIENT" --output "$WORK/keys.age" --pin-file "$WORK/pin")
export KEYSTORE_HOME="$WORK/target"
restore=$(ms "$KEYSTORE" restore "$WORK/keys.age" --identity "$WORK/key.txt" --kdf interactive --pin-file "$WORK/pin")
[ "$(KEYSTORE_HOME="$WORK/target" "$KEYSTORE" list | wc -l)" -eq "$N" ] || { echo "bench/backup.sh: not every identity was restored" >&2; exit 1; }
dryrun=$(ms "$KEYSTORE" restore "$WORK/keys.age" --identity "$WORK/key.txt" --dry-run)
age -d -i "$WORK/key.txt" -o "$WORK/bundle" "$WORK/keys.age"
age_encrypt=$(ms age -e -r "$RECIPIENT" -o "$WORK/again.age" "$WORK/bundle")
age_decrypt=$(ms age -d -i "$WORK/key.txt" -o "$WORK/bundle2" "$WORK/again.age")
rm -f "$WORK/bundle" "$WORK/bundle2"
argon_backup=$("$WORK/limits" argon2id "$N")
argon_restore=$("$WORK/limits" argon2id $((2 * N)))

printf '%-58s %8s %10s %10s\n' "$N identities (--kdf interactive)" "ms" "Argon2id" "own"
printf '%-58s %8s %10s %10s\n' "keystore backup (one PIN per identity)" "$backup" "$argon_backup" "$((backup - argon_backup))"
printf '%-58s %8s %10s %10s\n' "keystore restore (new vaults, a probe through each)" "$restore" "$argon_restore" "$((restore - argon_restore))"
printf '%-58s %8s %10s %10s\n' "keystore restore --dry-run (no PIN, nothing written)" "$dryrun" "0" "$dryrun"
printf '%-58s %8s\n' "  age -e to the same recipient, the same bundle" "$age_encrypt"
printf '%-58s %8s\n' "  age -d of it" "$age_decrypt"
