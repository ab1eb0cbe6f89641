#!/usr/bin/env python3
"""A loopback HTTP/1.1 keep-alive server that answers 200 at once, except that every PERIOD
seconds it stalls for STALL seconds: a request that arrives during a stall is answered when the
stall ends. Used by the coordinated-omission benchmark and the hdrhistogram interop test.

Usage: stall_server.py [--port 0] [--port-file F] [--stall 1.0] [--period 5.0]
"""
import argparse
import asyncio
import time


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--stall", type=float, default=1.0)
    parser.add_argument("--period", type=float, default=5.0)
    args = parser.parse_args()
    origin = time.monotonic()

    def stall_left():
        if args.stall <= 0:
            return 0.0
        phase = (time.monotonic() - origin) % args.period
        return args.stall - phase if phase < args.stall else 0.0

    response = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"

    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                if length:
                    await reader.readexactly(length)
                wait = stall_left()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(response)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", args.port, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(port))
        import os
        os.replace(args.port_file + ".tmp", args.port_file)
    print(f"stall server on 127.0.0.1:{port} (stall {args.stall}s every {args.period}s)", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
