#!/usr/bin/env python3
"""A keystore agent client with nothing but Python's standard library, written from docs/AGENT.md alone.

Usage: agent-client.py SOCKET. Prints one line per call, which AgentCLITests compares with the command line's own
signatures: the address, a signPayload of 00ff, a signMessage of "hello agent", the error for an unknown method,
and the names listKeys reports.
"""
import base64
import json
import socket
import sys


class Agent:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")
        self.next_id = 1

    def call(self, method, **params):
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        answer = json.loads(self.reader.readline())
        assert answer["jsonrpc"] == "2.0" and answer["id"] == request["id"], answer
        if "error" in answer:
            raise AgentError(answer["error"]["code"], answer["error"]["message"])
        return answer["result"]


class AgentError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def main():
    agent = Agent(sys.argv[1])
    address = agent.call("getAddress")["address"]
    print("address", address)
    signed = agent.call("signPayload", payload=base64.b64encode(bytes([0x00, 0xFF])).decode(), address=address)
    assert signed["signerAddress"] == address
    print("signPayload", signed["signature"])
    message = agent.call("signMessage", message="hello agent")
    assert message["signerAddress"] == address
    print("signMessage", message["signedMessage"])
    try:
        agent.call("nope")
    except AgentError as error:
        print("error", error.code, error.message)
    print("keys", " ".join(key["name"] for key in agent.call("listKeys")["keys"]))


if __name__ == "__main__":
    main()
