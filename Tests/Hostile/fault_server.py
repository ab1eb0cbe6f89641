#!/usr/bin/env python3
"""A target that misbehaves on purpose, for the hostile-input suite (standard library only, loopback only).

Usage: fault_server.py PORTS_FILE
Listens on 127.0.0.1 port 0 three times and writes `http=P reset=P silent=P` to PORTS_FILE:
  http    an HTTP/1.1 server whose path picks the fault:
            /ok                      200 {}
            /status/N                status N, body {}
            /slow/MS                 200 after MS milliseconds
            /hang                    reads the request, never answers (until the client hangs up)
            /reset                   reads the request, then resets the connection
            /huge/MB                 200 with an MB-megabyte body, streamed
            /redirect                302 to itself, forever
            /redirect-away           302 to http://example.invalid/
            /garbage                 bytes that are not HTTP, then close
            /retry-after             429 with Retry-After: 99999
            /accounts/ID             a probe answer with no entitlements
            /count                   how many requests reached the server so far (text)
  reset   accepts each connection and resets it at once
  silent  accepts each connection and never reads or answers
Runs until killed.
"""

import http.server
import os
import socket
import socketserver
import struct
import sys
import threading
import time

requests_seen = 0
lock = threading.Lock()


def reset(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"{}", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        global requests_seen
        with lock:
            requests_seen += 1
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        parts = self.path.split("?")[0].strip("/").split("/")
        kind, arg = parts[0], (parts[1] if len(parts) > 1 else "")
        if kind == "status":
            self.answer(int(arg or 200))
        elif kind == "slow":
            time.sleep(int(arg or 1000) / 1000)
            self.answer(200)
        elif kind == "hang":
            while self.connection.recv(1024):
                pass
            self.close_connection = True
        elif kind == "reset":
            self.close_connection = True
            reset(self.connection)
        elif kind == "huge":
            size = int(arg or 1) << 20
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            chunk = b"x" * 65536
            try:
                for _ in range(size // len(chunk)):
                    self.wfile.write(chunk)
            except OSError:
                self.close_connection = True
        elif kind == "redirect":
            self.answer(302, headers=[("Location", "/redirect")])
        elif kind == "redirect-away":
            self.answer(302, headers=[("Location", "http://example.invalid/")])
        elif kind == "garbage":
            self.wfile.write(b"\x00\xffNOT HTTP AT ALL\r\n\r\n")
            self.close_connection = True
        elif kind == "retry-after":
            self.answer(429, headers=[("Retry-After", "99999")])
        elif kind == "accounts":
            self.answer(200, b'{"entitlements": [], "balances": {}}')
        elif kind == "count":
            self.answer(200, str(requests_seen).encode())
        else:
            self.answer(200)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def raw_listener(behaviour):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)

    def serve():
        held = []
        while True:
            connection, _ = listener.accept()
            if behaviour == "reset":
                reset(connection)
            else:
                held.append(connection)

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def main():
    server = Server(("127.0.0.1", 0), Handler)
    ports = f"http={server.server_address[1]} reset={raw_listener('reset')} silent={raw_listener('silent')}"
    with open(sys.argv[1] + ".tmp", "w") as out:
        out.write(ports + "\n")
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
