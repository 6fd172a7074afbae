#!/usr/bin/env python3
"""A plain HTTP server on 127.0.0.1 for StellarWebAuthTests' fetch tests (FetchServer in FetchTests.swift).

It prints its port on the first line of stdout, then serves until its stdin is closed. Paths:
  /ok                  200 {"ok":true}
  /status/N            status N, body "no"
  /redirect?to=URL     302 to URL (as given: absolute or relative)
  /loop                302 to /loop, for ever
  /big?bytes=N         200 with N bytes and a Content-Length
  /stream?bytes=N      200 with N bytes and no Content-Length (the body ends when the connection does)
  /slow?seconds=N      waits N seconds, then 200
  /_log                the paths requested so far, one a line (itself not counted)
"""
import sys, threading, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

requested = []
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=(), length=True):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        try:
            if url.path == "/_log":
                with lock:
                    return self.answer(200, "\n".join(requested).encode())
            with lock:
                requested.append(self.path)
            if url.path == "/ok":
                self.answer(200, b'{"ok":true}')
            elif url.path.startswith("/status/"):
                self.answer(int(url.path[len("/status/"):]), b"no")
            elif url.path == "/redirect":
                self.answer(302, headers=[("Location", query["to"])])
            elif url.path == "/loop":
                self.answer(302, headers=[("Location", "/loop")])
            elif url.path == "/big":
                self.answer(200, b"x" * int(query["bytes"]))
            elif url.path == "/stream":
                self.answer(200, b"x" * int(query["bytes"]), length=False)
            elif url.path == "/slow":
                time.sleep(float(query["seconds"]))
                self.answer(200, b"late")
            else:
                self.answer(404)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a limit or a time-out): what the test is about


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
server.shutdown()
