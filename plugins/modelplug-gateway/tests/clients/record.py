"""Record what a client sends: a loopback HTTP server that writes each request (method,
path, query, headers without credentials, body) as one JSON line and answers with a
short canned answer in the shape the path asks for, so the client goes on as with a
real API. How the fixtures in ``tests/recorded/`` were made:

    python record.py OUT.jsonl [PORT]     # then point the client at http://127.0.0.1:PORT

With ``RECORD_TOOL_FIRST=1`` a turn with tools and no tool result yet is answered with a
tool call first (Claude Code's ``Read`` or Codex's ``exec_command`` of ``hello.txt``,
Codex's with an encrypted reasoning item before it), so the next request carries the
tool's result (and the reasoning) back.

The canned answers are invented here (in the shape of Anthropic's Messages stream and
OpenAI's Responses and Chat Completions streams); the text they spell is ``Hello!``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: Headers never written down: a credential, or a value that changes every run.
SECRET_HEADERS = {"authorization", "x-api-key", "cookie", "proxy-authorization"}
TEXT = "Hello!"


def sse(events: list[dict[str, Any]], named: bool = True) -> bytes:
    out = ""
    for event in events:
        name = f"event: {event['type']}\n" if named else ""
        out += f"{name}data: {json.dumps(event)}\n\n"
    return out.encode()


def anthropic_message(model: str) -> dict[str, Any]:
    return {
        "id": "msg_rec01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": TEXT}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 3},
    }


def anthropic_stream(model: str) -> bytes:
    start = anthropic_message(model) | {"content": [], "stop_reason": None}
    return sse(
        [
            {"type": "message_start", "message": start},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": TEXT},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 3},
            },
            {"type": "message_stop"},
        ]
    )


def responses_object(model: str, status: str, output: list[Any]) -> dict[str, Any]:
    return {
        "id": "resp_rec01",
        "object": "response",
        "created_at": 1765000000,
        "status": status,
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": 12,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 3,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        if status == "completed"
        else None,
    }


def responses_stream(model: str) -> bytes:
    item = {
        "id": "msg_rec01",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": TEXT, "annotations": []}],
    }
    empty = item | {"status": "in_progress", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    base = {"output_index": 0, "item_id": "msg_rec01"}
    return sse(
        [
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": responses_object(model, "in_progress", []),
            },
            {
                "type": "response.output_item.added",
                "sequence_number": 1,
                "output_index": 0,
                "item": empty,
            },
            {
                "type": "response.content_part.added",
                "sequence_number": 2,
                **base,
                "content_index": 0,
                "part": part,
            },
            {
                "type": "response.output_text.delta",
                "sequence_number": 3,
                **base,
                "content_index": 0,
                "delta": TEXT,
            },
            {
                "type": "response.output_text.done",
                "sequence_number": 4,
                **base,
                "content_index": 0,
                "text": TEXT,
            },
            {
                "type": "response.content_part.done",
                "sequence_number": 5,
                **base,
                "content_index": 0,
                "part": part | {"text": TEXT},
            },
            {
                "type": "response.output_item.done",
                "sequence_number": 6,
                "output_index": 0,
                "item": item,
            },
            {
                "type": "response.completed",
                "sequence_number": 7,
                "response": responses_object(model, "completed", [item]),
            },
        ]
    )


def anthropic_tool_stream(model: str, path: str) -> bytes:
    start = anthropic_message(model) | {"content": [], "stop_reason": None}
    block = {"type": "tool_use", "id": "toolu_rec01", "name": "Read", "input": {}}
    arguments = json.dumps({"file_path": path})
    return sse(
        [
            {"type": "message_start", "message": start},
            {"type": "content_block_start", "index": 0, "content_block": block},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": arguments},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
            {"type": "message_stop"},
        ]
    )


def responses_tool_stream(model: str) -> bytes:
    reasoning = {
        "id": "rs_rec01",
        "type": "reasoning",
        "summary": [],
        "encrypted_content": "gAAAAABrecordedOpaqueReasoningBlob0123456789==",
    }
    call = {
        "id": "fc_rec01",
        "type": "function_call",
        "status": "completed",
        "call_id": "call_rec01",
        "name": "exec_command",
        "arguments": json.dumps({"cmd": "cat hello.txt"}),
    }
    return sse(
        [
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": responses_object(model, "in_progress", []),
            },
            {
                "type": "response.output_item.added",
                "sequence_number": 1,
                "output_index": 0,
                "item": reasoning,
            },
            {
                "type": "response.output_item.done",
                "sequence_number": 2,
                "output_index": 0,
                "item": reasoning,
            },
            {
                "type": "response.output_item.added",
                "sequence_number": 3,
                "output_index": 1,
                "item": call | {"status": "in_progress", "arguments": ""},
            },
            {
                "type": "response.function_call_arguments.delta",
                "sequence_number": 4,
                "output_index": 1,
                "item_id": "fc_rec01",
                "delta": call["arguments"],
            },
            {
                "type": "response.function_call_arguments.done",
                "sequence_number": 5,
                "output_index": 1,
                "item_id": "fc_rec01",
                "arguments": call["arguments"],
            },
            {
                "type": "response.output_item.done",
                "sequence_number": 6,
                "output_index": 1,
                "item": call,
            },
            {
                "type": "response.completed",
                "sequence_number": 7,
                "response": responses_object(model, "completed", [reasoning, call]),
            },
        ]
    )


def wants_tool_first(body: Any) -> bool:
    """A turn with tools whose conversation holds no tool result yet."""
    if not os.environ.get("RECORD_TOOL_FIRST") or not isinstance(body, dict):
        return False
    if not body.get("tools"):
        return False
    text = json.dumps(body.get("messages", body.get("input")))
    return '"tool_result"' not in text and '"function_call_output"' not in text


class Recorder(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    out: Path
    lock = threading.Lock()

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"record: {self.command} {self.path}\n")

    def _record(self, body: bytes) -> Any:
        url = urlsplit(self.path)
        try:
            parsed: Any = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode(errors="replace")
        entry = {
            "method": self.command,
            "path": url.path,
            "query": url.query,
            "headers": {
                k.lower(): v for k, v in self.headers.items() if k.lower() not in SECRET_HEADERS
            },
            "body": parsed,
        }
        with self.lock, self.out.open("a") as file:
            file.write(json.dumps(entry) + "\n")
        return parsed

    def _answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self._record(b"")
        self._answer(200, b"", "text/plain")

    def do_GET(self) -> None:
        self._record(b"")
        self._answer(200, json.dumps({"object": "list", "data": []}).encode(), "application/json")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self._record(self.rfile.read(length)) or {}
        path = urlsplit(self.path).path
        model = body.get("model", "m") if isinstance(body, dict) else "m"
        stream = isinstance(body, dict) and body.get("stream")
        if path.endswith("/count_tokens"):
            self._answer(200, b'{"input_tokens": 12}', "application/json")
        elif path.endswith("/messages"):
            if stream and wants_tool_first(body):
                target = os.path.join(os.getcwd(), "hello.txt")
                self._answer(200, anthropic_tool_stream(model, target), "text/event-stream")
            elif stream:
                self._answer(200, anthropic_stream(model), "text/event-stream")
            else:
                payload = json.dumps(anthropic_message(model)).encode()
                self._answer(200, payload, "application/json")
        elif path.endswith("/responses"):
            if stream and wants_tool_first(body):
                self._answer(200, responses_tool_stream(model), "text/event-stream")
            elif stream:
                self._answer(200, responses_stream(model), "text/event-stream")
            else:
                item = {
                    "id": "msg_rec01",
                    "type": "message",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": TEXT, "annotations": []}],
                }
                payload = json.dumps(responses_object(model, "completed", [item])).encode()
                self._answer(200, payload, "application/json")
        else:
            self._answer(404, b'{"error": "not recorded"}', "application/json")


def main() -> None:
    Recorder.out = Path(sys.argv[1])
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Recorder)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
