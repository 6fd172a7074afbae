#!/usr/bin/env python3
"""Opens a keystore vault with nothing but docs/FORMAT.md, Python's standard library and the system libsodium.

Usage: python3 docs/open_vault_ctypes.py VAULT < pin   (prints the S... seed)
The recipe is the PyNaCl one in docs/FORMAT.md, with libsodium called through ctypes.
"""
import base64, ctypes, ctypes.util, hashlib, json, os, sys

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
    assert v["format"] == "stellar-keystore-vault" and v["version"] in (1, 2)
    assert v["name"] + ".vault" == os.path.basename(path), "copied under another name"
    kdf, cipher = v["kdf"], v["cipher"]
    assert 1 <= kdf["opsLimit"] <= 10 and 8192 <= kdf["memLimit"] <= 1 << 30
    fields = [v["format"], v["version"], v["name"], v["publicKey"], kdf["algorithm"], kdf["opsLimit"],
              kdf["memLimit"], kdf["salt"], cipher["algorithm"], cipher["nonce"], cipher["ciphertext"], v["createdAt"]]
    if v["version"] == 2:
        fields.append(v["account"])
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


if __name__ == "__main__":
    print(strkey(18 << 3, open_vault(sys.argv[1], sys.stdin.readline().strip())))
