#!/usr/bin/env python3
"""A SEP-10 server built from stellar-sdk's own code, for keystore's interop tests, on 127.0.0.1 only.

- GET /.well-known/stellar.toml: WEB_AUTH_ENDPOINT (this server's /auth), SIGNING_KEY, NETWORK_PASSPHRASE
  (testnet), among other SEP-1 fields. Asked for as `localhost` (the Host header), it is the client domain's
  stellar.toml instead, whose SIGNING_KEY is --client-domain-key.
- GET /auth?account=&home_domain=[&client_domain=]: a challenge, from stellar-sdk's build_challenge_transaction
  in mode "valid", or a hostile one breaking one rule (fixtures/sep10_challenges.py) in any other mode.
- POST /auth {"transaction"}: stellar-sdk's verify_challenge_transaction_signed_by_client_master_key; on
  success a JWT (HS256, signed with a key of this run) with iss, sub, iat, exp and client_domain.
- GET /_control/mode?set=MODE sets the mode; GET /_control/log lists every request to /auth since the last set.

Other modes, about HTTP rather than the challenge: "error" (400 with an error text holding an escape
sequence), "redirect-elsewhere" (302 to another host), "redirect-to-port-N" (302 to port N of the same host),
"huge" (a 1 MiB answer).

With --tls-cert and --tls-key it serves HTTPS instead (a certificate the client must refuse, in the tests).

Usage: sep10-server.py --client-domain-key G… [--tls-cert PEM --tls-key PEM]; it prints the port on the first line of stdout, then serves
until its standard input closes (so that it never outlives the test that started it).
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
import sep10_challenges as sep10  # noqa: E402
from stellar_sdk import Keypair, Network  # noqa: E402
from stellar_sdk.sep.stellar_web_authentication import verify_challenge_transaction_signed_by_client_master_key  # noqa: E402

PASSPHRASE = Network.TESTNET_NETWORK_PASSPHRASE
HOME = "127.0.0.1"
SERVER = Keypair.random()
JWT_KEY = secrets.token_bytes(32)
state = {"mode": "valid", "log": []}
lock = threading.Lock()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(claims):
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps(claims).encode())
    signature = hmac.new(JWT_KEY, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64url(signature)}"


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
        if url.path == "/.well-known/stellar.toml":
            if self.headers.get("Host", "").startswith("localhost"):
                toml = f'SIGNING_KEY = "{self.server.client_domain_key}"\n'
            else:
                toml = (f'# SEP-1, with more than keystore reads\nVERSION = "2.0.0"\n'
                        f'NETWORK_PASSPHRASE = "{PASSPHRASE}"\nWEB_AUTH_ENDPOINT = "http://{HOME}:{port}/auth"\n'
                        f'ACCOUNTS = [\n  "{SERVER.public_key}", # the server\n]\nSIGNING_KEY = "{SERVER.public_key}"\n'
                        f'URI_REQUEST_SIGNING_KEY = """\nnot used\n"""\n\n[DOCUMENTATION]\nORG_NAME = "keystore tests"\n'
                        f'[[CURRENCIES]]\ncode = "USD"\n')
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
        if mode.startswith("redirect-to-port-"):
            other = int(mode[len("redirect-to-port-"):])
            return self.answer(302, b"", headers=[("Location", f"http://{HOME}:{other}/auth?{url.query}")])
        if mode == "huge":
            return self.answer(200, b" " * (1 << 20))
        if query.get("home_domain") != HOME:
            return self.answer(400, {"error": "unknown home_domain"})
        client_domain = query.get("client_domain")
        xdr, answered = sep10.challenge(mode, SERVER, query["account"], HOME, HOME, PASSPHRASE, int(time.time()),
                                        client_domain=client_domain,
                                        client_domain_key=self.server.client_domain_key if client_domain else None)
        self.answer(200, {"transaction": xdr, "network_passphrase": answered})

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
            verify_challenge_transaction_signed_by_client_master_key(body["transaction"], SERVER.public_key, HOME, HOME, PASSPHRASE)
        except Exception as error:  # stellar-sdk's refusal, whatever it is, goes back to the client
            return self.answer(400, {"error": str(error)})
        from stellar_sdk.sep.stellar_web_authentication import read_challenge_transaction
        challenge = read_challenge_transaction(body["transaction"], SERVER.public_key, HOME, HOME, PASSPHRASE)
        now = int(time.time())
        claims = {"iss": f"http://{HOME}:{self.server.server_address[1]}/auth", "sub": challenge.client_account_id,
                  "iat": now, "exp": now + 3600}
        for operation in challenge.transaction.transaction.operations[1:]:
            if getattr(operation, "data_name", None) == "client_domain":
                claims["client_domain"] = operation.data_value.decode()
        with lock:
            entry["accepted"] = True
        self.answer(200, {"token": jwt(claims)})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--client-domain-key", required=True)
    parser.add_argument("--tls-cert", help="serve HTTPS with this certificate (and --tls-key)")
    parser.add_argument("--tls-key")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if args.tls_cert:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    # A client that hangs up on a large answer (as keystore does past its cap) is not the server's error.
    server.handle_error = lambda request, address: None
    server.client_domain_key = args.client_domain_key
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()  # until the test closes it, or dies
    server.shutdown()


if __name__ == "__main__":
    main()
