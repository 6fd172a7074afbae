#!/usr/bin/env python3
"""A SEP-45 (draft 0.1.1) server built from stellar-sdk's own SEP-45 pieces, for keystore's interop tests, on
127.0.0.1 only.

- GET /.well-known/stellar.toml: WEB_AUTH_FOR_CONTRACTS_ENDPOINT (this server's /auth), WEB_AUTH_CONTRACT_ID,
  SIGNING_KEY, NETWORK_PASSPHRASE (testnet), among other SEP-1 fields. Asked for as `localhost` (the Host header),
  it is the client domain's stellar.toml instead, whose SIGNING_KEY is --client-domain-key.
- GET /auth?account=C…&home_domain=[&client_domain=]: a challenge (fixtures/sep45_challenges.py: the entries as a
  simulation records them, the server's signed by stellar-sdk's authorize_entry) in mode "valid", or a hostile one
  breaking one rule in any other mode. In mode "stock", stellar-sdk's own build_challenge_authorization_entries,
  unchanged, on a stand-in RPC at ledger 1000000 (fixtures/sep45_stock.py): the client's entries left at expiration
  ledger 0, the server's signed through 1000180. Each challenge gets a fresh nonce.
- POST /auth {"authorization_entries"}: stellar-sdk's read_challenge_authorization_entries, then the nonce must be
  one this server issued and not used yet, the invocation and the server's entry as issued, and the client's
  expiration ledger the one the server put in, if it put one in, and not before the current ledger (1000000: an
  expired signature fails the host's check on simulation); the POST's log entry has it as "expiration". stellar-sdk's verify_challenge_authorization_entries would then
  simulate web_auth_verify on a Soroban RPC, which runs the account contract's __check_auth; there is no RPC here,
  so this server plays the account contract itself and checks the client's signature as such a contract would:
    * a contract account reading the account convention (Vec[Map{public_key, signature}]): Ed25519 by
      --account-key over SHA-256 of the entry's HashIDPreimage;
    * an OpenZeppelin smart account (stellar-accounts) whose signer is External(--verifier, --account-key) with an
      Ed25519 verifier: AuthPayload {context_rule_ids, signers}, the rule ids --context-rules (one per context:
      web_auth_verify is one), the signature over SHA-256(payload || XDR(Vec<u32> rule ids)).
  The client domain's entry, when there is one, must carry the account convention signature of its key. On
  success a JWT (HS256, signed with a key of this run) with iss, sub, iat, exp and client_domain.
- GET /_control/mode?set=MODE sets the mode; GET /_control/log lists every request to /auth since the last set.

Other modes, about HTTP rather than the challenge: "error" (400 with an error text), "redirect-elsewhere" (302 to
another host).

Usage: sep45-server.py --client-domain-key G… --account-key G… --verifier C… --context-rules N[,N…]; it prints the
port on the first line of stdout, then serves until its standard input closes (so that it never outlives the test
that started it).
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures"))
import sep45_challenges as sep45  # noqa: E402
import sep45_stock  # noqa: E402
from stellar_sdk import Address, Keypair, Network, scval  # noqa: E402
from stellar_sdk import xdr as x  # noqa: E402
from stellar_sdk.auth import authorization_payload_hash, build_authorization_preimage  # noqa: E402
from stellar_sdk.sep.stellar_soroban_web_authentication import (  # noqa: E402
    build_challenge_authorization_entries, read_challenge_authorization_entries)
from stellar_sdk.utils import sha256  # noqa: E402

PASSPHRASE = Network.TESTNET_NETWORK_PASSPHRASE
HOME = "127.0.0.1"
SERVER = Keypair.random()
CONTRACT = Address.from_raw_contract(secrets.token_bytes(32)).address
JWT_KEY = secrets.token_bytes(32)
state = {"mode": "valid", "log": [], "issued": {}}
lock = threading.Lock()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(claims):
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps(claims).encode())
    signature = hmac.new(JWT_KEY, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64url(signature)}"


def credentials(entry):
    return entry.credentials.address_v2 or entry.credentials.address


def address_of(entry):
    return Address.from_xdr_sc_address(credentials(entry).address).address


def payload(entry):
    """What the host hands the account's __check_auth: SHA-256 of the entry's preimage at its expiration."""
    expiration = credentials(entry).signature_expiration_ledger.uint32
    return authorization_payload_hash(build_authorization_preimage(entry, expiration, PASSPHRASE))


def check_account_convention(entry, key):
    """Vec[Map{public_key, signature}], one element, by `key` (a Keypair, public only), over the payload."""
    signatures = scval.from_vec(credentials(entry).signature)
    if len(signatures) != 1:
        raise ValueError(f"{len(signatures)} signatures, not one")
    pairs = {scval.from_symbol(k): scval.from_bytes(v) for k, v in scval.from_map(signatures[0]).items()}
    if set(pairs) != {"public_key", "signature"} or pairs["public_key"] != key.raw_public_key():
        raise ValueError("not the account's key")
    key.verify(payload(entry), pairs["signature"])


def check_smart_account(entry, key, verifier, rules):
    """AuthPayload {context_rule_ids, signers: {External(verifier, key): signature}} (OpenZeppelin do_check_auth)."""
    fields = {scval.from_symbol(k): v for k, v in scval.from_map(credentials(entry).signature).items()}
    if set(fields) != {"context_rule_ids", "signers"}:
        raise ValueError("not an AuthPayload")
    ids = [scval.from_uint32(v) for v in scval.from_vec(fields["context_rule_ids"])]
    if ids != rules:
        raise ValueError(f"context rules {ids}, not {rules}")
    signers = fields["signers"].map.sc_map
    if len(signers) != 1:
        raise ValueError(f"{len(signers)} signers, not one")
    signer = scval.from_vec(signers[0].key)
    if (scval.from_symbol(signer[0]) != "External" or scval.from_address(signer[1]).address != verifier
            or scval.from_bytes(signer[2]) != key.raw_public_key()):
        raise ValueError("not the account's External signer")
    digest = sha256(payload(entry) + fields["context_rule_ids"].to_xdr_bytes())
    key.verify(digest, scval.from_bytes(signers[0].val))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="application/json", headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Access-Control-Allow-Origin", "*")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    @property
    def web_auth_domain(self):
        return f"{HOME}:{self.server.server_address[1]}"

    def do_GET(self):
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        port = self.server.server_address[1]
        if url.path == "/_control/mode":
            with lock:
                state["mode"], state["log"] = query["set"], []
            return self.answer(200, {"mode": query["set"]})
        if url.path == "/_control/log":
            with lock:
                return self.answer(200, state["log"])
        if url.path == "/_control/contract":
            return self.answer(200, {"contract": CONTRACT, "server": SERVER.public_key})
        if url.path == "/.well-known/stellar.toml":
            if self.headers.get("Host", "").startswith("localhost"):
                toml = f'SIGNING_KEY = "{self.server.args.client_domain_key}"\n'
            else:
                toml = (f'# SEP-1, with more than keystore reads\nVERSION = "2.0.0"\n'
                        f'NETWORK_PASSPHRASE = "{PASSPHRASE}"\nWEB_AUTH_ENDPOINT = "http://{HOME}:{port}/sep10"\n'
                        f'WEB_AUTH_FOR_CONTRACTS_ENDPOINT = "http://{HOME}:{port}/auth"\nWEB_AUTH_CONTRACT_ID = "{CONTRACT}"\n'
                        f'SIGNING_KEY = "{SERVER.public_key}"\n\n[DOCUMENTATION]\nORG_NAME = "keystore tests"\n')
            return self.answer(200, toml.encode(), "text/plain")
        if url.path != "/auth":
            return self.answer(404, {"error": "not found"})
        with lock:
            mode = state["mode"]
            state["log"].append({"method": "GET", "account": query.get("account"), "home_domain": query.get("home_domain"),
                                 "client_domain": query.get("client_domain")})
        if mode == "error":
            return self.answer(400, {"error": "Too many challenges \x1b[31mtry later"})
        if mode == "redirect-elsewhere":
            return self.answer(302, b"", headers=[("Location", f"http://localhost:{port}/auth?{url.query}")])
        if query.get("home_domain") != HOME:
            return self.answer(400, {"error": "unknown home_domain"})
        client_domain = query.get("client_domain")
        nonce = base64.b64encode(secrets.token_bytes(48)).decode()
        client_domain_key = self.server.args.client_domain_key if client_domain else None
        if mode == "stock":
            entries, answered = build_challenge_authorization_entries(
                sep45_stock.SimulatingRPC(), SERVER.secret, query["account"], HOME, self.web_auth_domain, CONTRACT, PASSPHRASE,
                nonce=nonce, client_domain=client_domain, client_domain_account=client_domain_key), PASSPHRASE
        else:
            entries, answered = sep45.challenge(mode, SERVER, query["account"], CONTRACT, HOME, self.web_auth_domain, PASSPHRASE,
                                                nonce, client_domain=client_domain, client_domain_key=client_domain_key)
        with lock:
            state["issued"][nonce] = entries
        self.answer(200, {"authorization_entries": entries, "network_passphrase": answered})

    def do_POST(self):
        try:
            self.post()
        except Exception as error:  # a bug here must show in the test, not as a dropped connection
            self.answer(500, {"error": f"test server: {error!r}"})

    def post(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        entry = {"method": "POST", "accepted": False}
        with lock:
            state["log"].append(entry)
        try:
            claims = self.verify(body["authorization_entries"], entry)
        except Exception as error:  # stellar-sdk's refusal or this server's, whatever it is, goes back to the client
            entry["error"] = str(error)
            return self.answer(400, {"error": str(error)})
        with lock:
            entry["accepted"] = True
        self.answer(200, {"token": jwt(claims)})

    def verify(self, signed, log):
        args = self.server.args
        challenge = read_challenge_authorization_entries(signed, SERVER.public_key, HOME, self.web_auth_domain, CONTRACT)
        with lock:
            issued = state["issued"].pop(challenge.nonce, None)
        if issued is None:
            raise ValueError("a nonce this server did not issue, or one used already")
        issued_entries = {address_of(e): e for e in x.SorobanAuthorizationEntries.from_xdr(issued).soroban_authorization_entries}
        key = Keypair.from_public_key(args.account_key)
        for entry in challenge.authorization_entries.soroban_authorization_entries:
            address = address_of(entry)
            original = issued_entries[address]
            if entry.root_invocation != original.root_invocation or entry.credentials.type != original.credentials.type:
                raise ValueError(f"the entry for {address} is not the one issued")
            if address == SERVER.public_key:
                if entry != original:
                    raise ValueError("the server's entry was changed")
                continue
            expiration = credentials(entry).signature_expiration_ledger.uint32
            issued_expiration = credentials(original).signature_expiration_ledger.uint32
            if issued_expiration != 0 and expiration != issued_expiration:
                raise ValueError(f"the entry for {address} is signed through another ledger than the one issued")
            if expiration < sep45_stock.LATEST_LEDGER:
                raise ValueError(f"the entry for {address} expired at ledger {expiration}, before the current one")
            if address == challenge.client_account_id:
                log["expiration"] = expiration
            if address == challenge.client_account_id:
                if credentials(entry).signature.type == x.SCValType.SCV_MAP:
                    check_smart_account(entry, key, args.verifier, args.context_rules)
                else:
                    check_account_convention(entry, key)
            elif address == challenge.client_domain_account:
                check_account_convention(entry, Keypair.from_public_key(challenge.client_domain_account))
        now = int(time.time())
        claims = {"iss": f"http://{HOME}:{self.server.server_address[1]}/auth", "sub": challenge.client_account_id,
                  "iat": now, "exp": now + 3600}
        if challenge.client_domain:
            claims["client_domain"] = challenge.client_domain
        return claims


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--client-domain-key", required=True)
    parser.add_argument("--account-key", required=True, help="the key the contract account accepts")
    parser.add_argument("--verifier", required=True, help="the smart account's Ed25519 verifier contract")
    parser.add_argument("--context-rules", required=True, type=lambda text: [int(n) for n in text.split(",")])
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.handle_error = lambda request, address: None
    server.args = args
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()  # until the test closes it, or dies
    server.shutdown()


if __name__ == "__main__":
    main()
