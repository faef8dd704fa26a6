"""End to end over HTTP: ChatOpenAI(base_url=...) against a scripted OpenAI-compatible server on 127.0.0.1.

The server answers /v1/chat/completions from a script keyed by the requested
tool (the judgement's schema): tool calls, one HTTP 500 and one malformed body.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from langchain_memoryos import MemoryOS, MemoryOSConfig
from tests.scripted_model import page_answer

T0 = dt.datetime(2024, 6, 1, 9, tzinfo=dt.UTC)


class Script:
    """Answers per tool name, used in order (the last repeats); records every request."""

    def __init__(self, answers: dict[str, list[Any]]) -> None:
        self.answers = answers
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def next(self, body: dict[str, Any]) -> Any:
        with self.lock:
            self.requests.append(body)
            tools = body.get("tools") or []
            name = tools[0]["function"]["name"] if tools else "text"
            used = sum(1 for r in self.requests if _tool(r) == name) - 1
            entries = self.answers.get(name, [{}])
            return name, entries[min(used, len(entries) - 1)]


def _tool(body: dict[str, Any]) -> str:
    tools = body.get("tools") or []
    return str(tools[0]["function"]["name"]) if tools else "text"


def _completion(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 200, "completion_tokens": 30, "total_tokens": 230},
    }


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script({})

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            name, answer = script.next(body)
            if answer == "HTTP 500":
                payload, status = b'{"error": {"message": "upstream exploded", "type": "server_error"}}', 500
            elif answer == "MALFORMED":
                payload, status = b'{"id": "x", "choices": [{"message": {"role": "assistant", "tool_c', 200
            else:
                payload, status = json.dumps(_completion(name, answer)).encode(), 200
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_memory_over_a_real_http_endpoint(server: tuple[str, Script]) -> None:
    url, script = server
    script.answers = {
        "PageAnalysisOutput": ["HTTP 500", "MALFORMED", page_answer("The user lives in Lisbon."), page_answer()],
        "RecordsOutput": [
            {
                "records": [
                    {
                        "aspect": "personal_profile",
                        "intent": "inform",
                        "personal": True,
                        "entities": ["Porto"],
                        "summary": "The user lives in Porto.",
                        "confidence": 1,
                    }
                ]
            }
        ],
        "RelationsOutput": [{"relations": [{"candidate": 1, "label": "update"}]}],
        "FuseOutput": [{"summary": "The user lives in Porto (before: Lisbon).", "entities": ["Porto"]}],
    }
    model = ChatOpenAI(model="scripted", base_url=url, api_key="test", max_retries=0, timeout=10)  # type: ignore[arg-type]
    memory = MemoryOS(model=model, config=MemoryOSConfig(stm_capacity=1, promotion_heat=100.0))
    for i, (a, b) in enumerate([("I live in Lisbon.", "Nice!"), ("ok", "ok"), ("fine", "fine")]):
        memory.add_turn(a, b, user_id="u", thread_id="t", timestamp=T0 + dt.timedelta(minutes=i))
    pages = sorted(memory.list_pages(user_id="u"), key=lambda p: p.timestamp)
    # the first page: HTTP 500, then a malformed body, then a good answer (max_retries=2 → 3 attempts)
    assert [r.summary for r in pages[0].candidates] == ["The user lives in Lisbon."]
    assert pages[0].keywords == ["topic", "chat"]  # the model's keywords, not the heuristic's
    usage = memory.stats(user_id="u").llm_usage["analyze_page"]
    assert (usage["calls"], usage["fallbacks"]) == (5, 0)  # 2 failed + 3 good calls (one per page added)
    # the good calls' tokens come from the server's "usage" (230 each); the malformed answer adds an estimate
    assert usage["tokens"] > 690
    # a direct fact goes through parse → judge → fuse over HTTP
    memory.add_fact("The user lives in Lisbon.", user_id="u")
    events = memory.add_fact("Actually I moved to Porto.", user_id="u")
    assert [e.action for e in events] == ["updated"]
    assert [f.summary for f in memory.list_facts(user_id="u")] == ["The user lives in Porto (before: Lisbon)."]
    # every request asked for a tool (structured output), with the judgement's prompt
    assert all(r.get("tools") for r in script.requests)
    assert any("2024-06-01" in json.dumps(r["messages"]) for r in script.requests if _tool(r) == "PageAnalysisOutput")
