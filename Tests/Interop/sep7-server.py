#!/usr/bin/env python3
"""A SEP-7 requester on 127.0.0.1 for SEP7CLITests, made of stellar-sdk's own code (TransactionStellarUri): it
serves its stellar.toml (URI_REQUEST_SIGNING_KEY), hands out requests signed for its origin (127.0.0.1:PORT), and
is their callback, which checks what it is POSTed.

It prints its port on the first line of stdout, then serves until its stdin is closed. Paths:
  /.well-known/stellar.toml   URI_REQUEST_SIGNING_KEY (none after /_control?toml=no-key)
  /_request?case=NAME         a request: valid (testnet, every field, signed), public (no network_passphrase,
                              signed), tampered (valid with one byte of msg changed), wrong-key (signed by
                              another key), unsigned-origin (an origin, no signature), no-callback (valid, without
                              a callback)
  /_signed?case=NAME          the request's envelope signed by the golden vault's key, by stellar-sdk
  /_control?callback=N        the callback answers status N from then on (200 by default)
  /_control?reset=1           back to how it started: the key in stellar.toml, callbacks 200, no POST recorded
                              (SEP7CLITests shares one server between its tests)
  /callback?id=7 (POST)       records the form: its Content-Type, its fields, and whether `xdr` is the envelope
                              signed by the golden key (hash and signature checked by stellar-sdk)
  /_log                       the POSTs recorded, as JSON
"""
import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from stellar_sdk import Account, Asset, Keypair, Network, TransactionBuilder, TransactionEnvelope
from stellar_sdk.exceptions import BadSignatureError
from stellar_sdk.sep.stellar_uri import TransactionStellarUri

GOLDEN = Keypair.from_secret("SCOWDMM5576VUYF2QRFPJEXMFTCEISOFNF5TE2IZOA52YAY4VZ7WBQNO")
ORIGIN = Keypair.from_raw_ed25519_seed(bytes([7]) * 32)
WRONG = Keypair.from_raw_ed25519_seed(bytes([8]) * 32)
DEST = Keypair.from_raw_ed25519_seed(bytes([2]) * 32)
MSG = "Pay invoice 7 & co."

state = {"toml": "ok", "callback": 200}
posts = []
lock = threading.Lock()


def envelope(passphrase):
    source = Account(GOLDEN.public_key, 4_000_000_000)
    return (TransactionBuilder(source, network_passphrase=passphrase, base_fee=100)
            .add_time_bounds(0, 0)
            .append_payment_op(DEST.public_key, Asset.native(), "12.5")
            .build())


def request(case, port):
    origin = f"127.0.0.1:{port}"
    callback = None if case == "no-callback" else f"http://127.0.0.1:{port}/callback?id=7"
    if case == "public":
        uri = TransactionStellarUri(envelope(Network.PUBLIC_NETWORK_PASSPHRASE), message="public", origin_domain=origin)
    else:
        uri = TransactionStellarUri(envelope(Network.TESTNET_NETWORK_PASSPHRASE), callback=callback, pubkey=GOLDEN.public_key,
                                    message=MSG, network_passphrase=Network.TESTNET_NETWORK_PASSPHRASE, origin_domain=origin)
    if case != "unsigned-origin":
        uri.sign(WRONG if case == "wrong-key" else ORIGIN)
    text = uri.to_uri()
    if case == "tampered":
        text = text.replace("msg=Pay", "msg=Pby", 1)
    return text


def signed(case):
    passphrase = Network.PUBLIC_NETWORK_PASSPHRASE if case == "public" else Network.TESTNET_NETWORK_PASSPHRASE
    tx = envelope(passphrase)
    tx.sign(GOLDEN)
    return tx.to_xdr()


def check_posted(xdr):
    try:
        tx = TransactionEnvelope.from_xdr(xdr, Network.TESTNET_NETWORK_PASSPHRASE)
        GOLDEN.verify(tx.hash(), tx.signatures[-1].signature)
        return tx.to_xdr() == signed("valid")
    except (BadSignatureError, Exception):
        return False


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", content_type="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        port = self.server.server_address[1]
        if url.path == "/.well-known/stellar.toml":
            toml = 'NETWORK_PASSPHRASE = "Test SDF Network ; September 2015"\n'
            if state["toml"] == "ok":
                toml += f'URI_REQUEST_SIGNING_KEY = "{ORIGIN.public_key}"\n'
            self.answer(200, toml.encode(), "application/toml")
        elif url.path == "/_request":
            self.answer(200, request(query["case"], port).encode())
        elif url.path == "/_signed":
            self.answer(200, signed(query["case"]).encode())
        elif url.path == "/_control":
            with lock:
                if "reset" in query:
                    state.update(toml="ok", callback=200)
                    posts.clear()
                if "toml" in query:
                    state["toml"] = query["toml"]
                if "callback" in query:
                    state["callback"] = int(query["callback"])
            self.answer(200, b"ok")
        elif url.path == "/_log":
            with lock:
                self.answer(200, json.dumps(posts).encode(), "application/json")
        else:
            self.answer(404, b"no")

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        fields = urllib.parse.parse_qs(body, keep_blank_values=True, strict_parsing=True)
        with lock:
            posts.append({
                "path": url.path, "query": url.query, "contentType": self.headers.get("Content-Type"),
                "fields": sorted(fields), "valid": list(fields) == ["xdr"] and len(fields["xdr"]) == 1 and check_posted(fields["xdr"][0]),
            })
            status = state["callback"]
        self.answer(status, b'{"status":"received"}' if status == 200 else b"callback refused \x1b[31m", "application/json")


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
server.shutdown()
