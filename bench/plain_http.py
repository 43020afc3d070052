"""The kit's plain-http transport (modelplug.plain_http) against httpx2's own, per call
to a loopback server, in one run.

    python bench/plain_http.py [--calls 3000] [--rounds 5]

Processes: the server (asyncio, keep-alive: a JSON answer with a Content-Length, or a
chunked 5-event SSE stream) and this one, which makes the calls one after another
through ``httpx2.AsyncClient`` as the kit does (``build_request``, ``send(stream=True)``,
every byte read, ``aclose``), in alternating rounds of each transport. Printed: this
process's CPU time per call (user + system), medians over the rounds, and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVER = r"""
import asyncio, json, sys
PLAIN = json.dumps({"id": "c", "object": "chat.completion", "choices": [{"index": 0,
    "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}]}).encode()
EVENTS = b"".join(b"data: " + json.dumps({"choices": [{"delta": {"content": w}}]}).encode()
    + b"\n\n" for w in ["Hello", " from", " the", " server", "!"]) + b"data: [DONE]\n\n"
ANSWERS = {
    b"/plain": b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%b"
        % (len(PLAIN), PLAIN),
    b"/sse": b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked"
        b"\r\n\r\n%x\r\n%b\r\n0\r\n\r\n" % (len(EVENTS), EVENTS),
}
async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            path = head.split(b" ", 2)[1]
            for line in head.lower().split(b"\r\n"):
                if line.startswith(b"content-length:"):
                    await reader.readexactly(int(line.split(b":")[1]))
            writer.write(ANSWERS[path])
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()
async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", int(sys.argv[1]))
    async with server:
        await server.serve_forever()
asyncio.run(main())
"""

BODY = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true}'


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_up(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the server did not come up")


async def per_call(port: int, path: str, calls: int, ours: bool) -> float:
    """CPU seconds per call over ``calls`` calls (after a warm-up)."""
    import httpx2
    from modelplug.plain_http import PlainHTTPTransport

    limits = httpx2.Limits(max_connections=100, max_keepalive_connections=20)
    mounts = {"http://": PlainHTTPTransport(limits)} if ours else None
    async with httpx2.AsyncClient(limits=limits, mounts=mounts, timeout=10) as http:
        url = httpx2.URL(f"http://127.0.0.1:{port}{path}")
        headers = {"authorization": "Bearer unused", "content-type": "application/json"}

        async def one() -> None:
            request = http.build_request("POST", url, content=BODY, headers=headers)
            answer = await http.send(request, stream=True)
            try:
                async for _ in answer.aiter_bytes():
                    pass
            finally:
                await answer.aclose()

        for _ in range(200):
            await one()
        before = os.times()
        for _ in range(calls):
            await one()
        after = os.times()
    return (after.user - before.user + after.system - before.system) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as work:
        script = Path(work) / "server.py"
        script.write_text(SERVER)
        server = subprocess.Popen([sys.executable, str(script), str(port)])
        try:
            wait_up(port)
            for path in ("/plain", "/sse"):
                got: dict[bool, list[float]] = {True: [], False: []}
                for round_ in range(args.rounds):
                    for ours in (True, False) if round_ % 2 == 0 else (False, True):
                        got[ours].append(asyncio.run(per_call(port, path, args.calls, ours)))
                kit, httpx2s = statistics.median(got[True]), statistics.median(got[False])
                print(
                    f"{path:7} CPU per call: plain_http {kit * 1e6:6.0f} us, httpx2's own "
                    f"{httpx2s * 1e6:6.0f} us ({kit / httpx2s:.2f}x)"
                )
        finally:
            server.kill()


if __name__ == "__main__":
    main()
