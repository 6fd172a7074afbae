#!/usr/bin/env python3
"""Opens a keystore vault with nothing but docs/FORMAT.md, Python's standard library and the system libsodium.

Usage: python3 docs/open_vault_ctypes.py VAULT < pin   (prints the S... seed)
The recipe is the PyNaCl one in docs/FORMAT.md, with libsodium called through ctypes. A TPM-bound vault
(version 3) is unsealed with tpm2-tools (tpm2_createprimary, tpm2_load, tpm2_unseal) on the TPM that
TPM2TOOLS_TCTI names, e.g. TPM2TOOLS_TCTI=swtpm:host=127.0.0.1,port=2321.
"""
import base64, ctypes, ctypes.util, hashlib, json, os, subprocess, sys, tempfile

sodium = ctypes.CDLL(ctypes.util.find_library("sodium") or "libsodium.so.23")
assert sodium.sodium_init() >= 0


def strkey(version_byte, payload):
    data = bytes([version_byte]) + payload
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return base64.b32encode(data + crc.to_bytes(2, "little")).decode().rstrip("=")


def unique_keys(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "a key appears twice"
    return dict(pairs)


def no_fractions(text):
    raise ValueError("a number that is not an integer written as digits")


def open_vault(path, pin):
    v = json.load(open(path, encoding="utf-8"), object_pairs_hook=unique_keys, parse_float=no_fractions)
    assert v["format"] == "stellar-keystore-vault" and v["version"] in (1, 2, 3)
    assert v["name"] + ".vault" == os.path.basename(path), "copied under another name"
    kdf, cipher = v["kdf"], v["cipher"]
    assert 1 <= kdf["opsLimit"] <= 10 and 8192 <= kdf["memLimit"] <= 1 << 30
    fields = [v["format"], v["version"], v["name"], v["publicKey"], kdf["algorithm"], kdf["opsLimit"],
              kdf["memLimit"], kdf["salt"], cipher["algorithm"], cipher["nonce"], cipher["ciphertext"], v["createdAt"]]
    if "account" in v:
        fields.append(v["account"])
    if v["version"] == 3:
        fields += [v["tpm"]["template"], v["tpm"]["primary"], v["tpm"]["public"], v["tpm"]["private"]]
    digest = hashlib.sha256("".join(f"{f}\n" for f in fields).encode()).digest()
    assert base64.b64decode(v["check"]) == digest, "damaged or edited"
    assert kdf["algorithm"] == "argon2id13" and cipher["algorithm"] == "xsalsa20poly1305"

    password = pin.encode("ascii")
    salt = base64.b64decode(kdf["salt"])
    key = ctypes.create_string_buffer(32)
    ARGON2ID13 = 2
    rc = sodium.crypto_pwhash(key, ctypes.c_ulonglong(32), password, ctypes.c_ulonglong(len(password)), salt,
                              ctypes.c_ulonglong(kdf["opsLimit"]), ctypes.c_size_t(kdf["memLimit"]), ARGON2ID13)
    assert rc == 0, "out of memory"
    if v["version"] == 3:
        key = ctypes.create_string_buffer(tpm_bound_key(v["tpm"], key.raw), 32)
    box = base64.b64decode(cipher["ciphertext"])
    plaintext = ctypes.create_string_buffer(len(box) - 16)
    rc = sodium.crypto_secretbox_open_easy(plaintext, box, ctypes.c_ulonglong(len(box)),
                                           base64.b64decode(cipher["nonce"]), key)
    assert rc == 0, "incorrect PIN"
    seed = ctypes.create_string_buffer(plaintext.raw[:32], 32)
    public, secret = ctypes.create_string_buffer(32), ctypes.create_string_buffer(64)
    sodium.crypto_sign_seed_keypair(public, secret, seed)
    assert strkey(6 << 3, public.raw) == v["publicKey"], "tampered"
    return seed.raw


def blake2b_256(label, *parts):
    """libsodium's crypto_generichash with a 32-byte output, keyed with the label."""
    return hashlib.blake2b(b"".join(parts), key=label, digest_size=32).digest()


def tpm_bound_key(tpm, pin_derived):
    """Version 3: the TPM's secret for authValue, then the vault key from pinKey and that secret."""
    assert tpm["template"] == "tcg-srk-ecc-p256"
    auth_value = blake2b_256(b"stellar-keystore/v3/tpm-auth", pin_derived)
    pin_key = blake2b_256(b"stellar-keystore/v3/pin-key", pin_derived)
    with tempfile.TemporaryDirectory() as scratch:
        def path(name):
            return os.path.join(scratch, name)
        open(path("public"), "wb").write(base64.b64decode(tpm["public"]))
        open(path("private"), "wb").write(base64.b64decode(tpm["private"]))
        def run(*args):
            out = subprocess.run(args, check=True, stdout=subprocess.PIPE).stdout
            # Without a resource manager (swtpm, /dev/tpm0) every tool leaves its objects loaded: flush them.
            subprocess.run(["tpm2_flushcontext", "-t"], check=True)
            return out
        # The TCG SRK template for ECC NIST P-256 (AES-128-CFB for its children), regenerated, never persisted.
        run("tpm2_createprimary", "-C", "o", "-g", "sha256", "-G", "ecc256:aes128cfb", "-c", path("primary"),
            "-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt")
        run("tpm2_readpublic", "-c", path("primary"), "-n", path("name"))
        assert open(path("name"), "rb").read() == base64.b64decode(tpm["primary"]), "another TPM, or this one cleared"
        run("tpm2_load", "-C", path("primary"), "-u", path("public"), "-r", path("private"), "-c", path("object"))
        # A plain password session: simpler than keystore's salted, encrypted one, and enough for a check.
        tpm_secret = run("tpm2_unseal", "-c", path("object"), "-p", "hex:" + auth_value.hex())
    return blake2b_256(b"stellar-keystore/v3/vault-key", pin_key, tpm_secret)


if __name__ == "__main__":
    print(strkey(18 << 3, open_vault(sys.argv[1], sys.stdin.readline().strip())))
