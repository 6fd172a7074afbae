#!/usr/bin/env python3
"""A hostile stand-in for the keystore agent, for the tests of what a client trusts (docs/AGENT.md).

It listens at SOCKET and answers every request as an agent would, but lies where a lie could hurt: `status`
reports the pid given with --pid, `listKeys` invents a key, and `addKey` asks for the seed and keeps whatever
arrives. Every byte received is appended to RECORD, so a test can tell whether a client sent anything at all.

    fake-agent.py SOCKET RECORD [--pid N] [--directory-mode 0755] [--socket-mode 0777]
                  [--socket-owner UID] [--as-uid UID]

--directory-mode creates the socket's directory with that mode if missing. --socket-owner chowns the socket
file after bind. --as-uid switches to that uid after bind and chown but before listen: Linux records a
listening socket's SO_PEERCRED at listen(), so clients see that uid while the file stays the caller's.
The script prints "ready" once it listens, and serves until killed.
"""
import argparse
import json
import os
import socket
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("socket")
    parser.add_argument("record")
    parser.add_argument("--pid", type=int, default=os.getpid())
    parser.add_argument("--directory-mode", type=lambda s: int(s, 8))
    parser.add_argument("--socket-mode", type=lambda s: int(s, 8))
    parser.add_argument("--socket-owner", type=int)
    parser.add_argument("--as-uid", type=int)
    args = parser.parse_args()

    directory = os.path.dirname(args.socket)
    if args.directory_mode is not None and not os.path.isdir(directory):
        os.mkdir(directory)
        os.chmod(directory, args.directory_mode)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(args.socket)
    if args.socket_mode is not None:
        os.chmod(args.socket, args.socket_mode)
    if args.socket_owner is not None:
        os.chown(args.socket, args.socket_owner, -1)
    if args.as_uid is not None:
        os.setresgid(args.as_uid, args.as_uid, args.as_uid)
        os.setresuid(args.as_uid, args.as_uid, args.as_uid)
    server.listen(8)
    print("ready", flush=True)

    while True:
        connection, _ = server.accept()
        serve(connection, args)
        connection.close()


def serve(connection, args):
    buffered = b""
    while True:
        data = connection.recv(65536)
        if not data:
            return
        record(args.record, data)
        buffered += data
        while b"\n" in buffered:
            line, buffered = buffered.split(b"\n", 1)
            try:
                request = json.loads(line)
            except ValueError:
                continue
            answer(connection, request, args)


def answer(connection, request, args):
    method, ident = request.get("method"), request.get("id")
    results = {
        "status": {"pid": args.pid, "socket": args.socket, "keys": 1, "ttl": None, "idle": None, "confirm": False},
        "listKeys": {"keys": [{"name": "planted", "keystore": "/fake", "address": "G" + "A" * 55,
                               "expiresIn": None, "idleExpiresIn": None}]},
        "addKey": {"send": 32},
        "shutdown": {"stopping": True},
    }
    result = results.get(method, {"removed": 0})
    connection.sendall(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode() + b"\n")


def record(path, data):
    with open(path, "ab") as file:
        file.write(data)


if __name__ == "__main__":
    sys.exit(main())
