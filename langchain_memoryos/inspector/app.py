"""The inspector's Starlette application: its routes, each rendering one server-side template.

Needs the ``inspector`` extra (``pip install "langchain-memoryos[inspector]"``):
:func:`langchain_memoryos.inspector.create_inspector_app` imports this module
only when called.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from langchain_memoryos.amu.corrections import FactNotFoundError
from langchain_memoryos.inspector import data
from langchain_memoryos.inspector.ask import ask
from langchain_memoryos.inspector.security import HostCheck, TokenGuard
from langchain_memoryos.memory import MemoryOS
from langchain_memoryos.operations.forget import PageNotFoundError
from langchain_memoryos.schema.context import fact_ref, page_ref

__all__ = ["build_app"]

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("langchain_memoryos.inspector", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


#: Every page: not cached, never framed, nothing loaded from anywhere (the CSS is inline), forms post here only.
HEADERS = {
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "content-security-policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
}


def _when(value: Any) -> str:
    if not isinstance(value, _dt.datetime):
        return "—"
    return value.astimezone(_dt.UTC).strftime("%Y-%m-%d %H:%M")


_ENV.globals.update(when=_when, page_ref=page_ref, fact_ref=fact_ref)
_ENV.filters["fact_ref"] = fact_ref


def _int(request: Request, name: str) -> int:
    try:
        return max(1, int(request.query_params.get(name, "1")))
    except ValueError:
        return 1


class _Inspector:
    """The routes over one memory (read-only unless ``allow_edit``)."""

    def __init__(self, memory: MemoryOS, token: str, allow_edit: bool, page_size: int) -> None:
        self.memory = memory
        self.token = token
        self.allow_edit = allow_edit
        self.size = page_size

    # -- rendering ------------------------------------------------------------
    def _scoped(self, request: Request) -> MemoryOS:
        return data.scoped(self.memory, request.query_params.get("agent", "").strip() or None)

    def _render(self, request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        agent = request.query_params.get("agent", "").strip() or self.memory.agent_id
        root = str(request.scope.get("root_path", ""))

        def link(path: str, **params: Any) -> str:
            if agent and agent != self.memory.agent_id and "agent" not in params:
                params["agent"] = agent
            kept = {k: v for k, v in params.items() if v not in (None, "", 1) or k in ("u", "t", "s", "f")}
            return root + path + (f"?{urlencode(kept)}" if kept else "")

        html: str = _ENV.get_template(template).render(
            link=link,
            token=self.token,
            allow_edit=self.allow_edit,
            scope_agent=agent,
            **context,
        )
        return HTMLResponse(html, status_code=status, headers=HEADERS)

    def _message(self, request: Request, status: int, heading: str, message: str) -> HTMLResponse:
        return self._render(request, "message.html", status, heading=heading, message=message, back="")

    def _user(self, request: Request) -> str | None:
        user = request.query_params.get("u", "")
        return user if user.strip() else None

    # -- views ------------------------------------------------------------------
    async def users(self, request: Request) -> Response:
        memory = self._scoped(request)
        ids = await run_in_threadpool(memory.list_users)
        page = data.Paged.of(ids, _int(request, "page"), self.size)
        counts = [await run_in_threadpool(data.user_counts, memory, user) for user in page.items]
        rows = data.Paged(counts, page.number, page.size, page.total)
        return self._render(request, "users.html", users=rows)

    async def user(self, request: Request) -> Response:
        user = self._user(request)
        if user is None:
            return self._message(request, 400, "No user", "Pass the user as ?u=USER (the users page links each).")
        view = await run_in_threadpool(
            data.user_view,
            self._scoped(request),
            user,
            thread_page=_int(request, "tp"),
            segment_page=_int(request, "sp"),
            fact_page=_int(request, "fp"),
            size=self.size,
        )
        return self._render(request, "user.html", v=view, params={"u": user})

    async def thread(self, request: Request) -> Response:
        user, thread = self._user(request), request.query_params.get("t", "")
        if user is None or not thread:
            return self._message(request, 400, "No thread", "Pass ?u=USER&t=THREAD.")
        rows = await run_in_threadpool(
            data.thread_pages, self._scoped(request), user, thread, page=_int(request, "page"), size=self.size
        )
        params = {"u": user, "t": thread}
        return self._render(
            request,
            "pages.html",
            user_id=user,
            thread_id=thread,
            segment=None,
            rows=rows,
            path="/user/thread",
            params=params,
        )

    async def segment(self, request: Request) -> Response:
        user, seg = self._user(request), request.query_params.get("s", "")
        if user is None or not seg:
            return self._message(request, 400, "No segment", "Pass ?u=USER&s=SEGMENT.")
        found = await run_in_threadpool(
            data.segment_pages, self._scoped(request), user, seg, page=_int(request, "page"), size=self.size
        )
        if found is None:
            return self._message(request, 404, "No such segment", f"{user!r} has no segment {seg!r}.")
        view, rows = found
        return self._render(
            request,
            "pages.html",
            user_id=user,
            thread_id="",
            segment=view,
            rows=rows,
            path="/user/segment",
            params={"u": user, "s": seg},
        )

    async def fact(self, request: Request) -> Response:
        user, fact_id = self._user(request), request.query_params.get("f", "")
        if user is None or not fact_id:
            return self._message(request, 400, "No fact", "Pass ?u=USER&f=FACT.")
        found = await run_in_threadpool(data.fact_view, self._scoped(request), user, fact_id)
        if found is None:
            return self._message(
                request, 404, "No such fact", f"{user!r} has no fact {fact_id!r} (deleted or replaced?)."
            )
        return self._render(request, "fact.html", user_id=user, f=found)

    async def log(self, request: Request) -> Response:
        user = self._user(request)
        if user is None:
            return self._message(request, 400, "No user", "Pass ?u=USER.")
        action = request.query_params.get("action", "")
        if action and action not in data.ACTIONS:
            return self._message(request, 400, "No such action", f"action must be one of {', '.join(data.ACTIONS)}.")
        rows = await run_in_threadpool(
            data.log_view, self._scoped(request), user, action=action, page=_int(request, "page"), size=self.size
        )
        return self._render(
            request,
            "log.html",
            user_id=user,
            rows=rows,
            action=action,
            actions=data.ACTIONS,
            params={"u": user, "action": action},
        )

    async def ask(self, request: Request) -> Response:
        user = self._user(request)
        if user is None:
            return self._message(request, 400, "No user", "Pass ?u=USER.")
        question = request.query_params.get("q", "").strip()
        thread = request.query_params.get("t", "").strip() or "default"
        answer = None
        if question:
            answer = await run_in_threadpool(ask, self._scoped(request), user, question, thread_id=thread)
        return self._render(request, "ask.html", user_id=user, a=answer)

    # -- edits (only with allow_edit) ----------------------------------------------
    async def _form(self, request: Request) -> dict[str, str]:
        body = await request.body()
        return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))

    def _refused(self, request: Request) -> Response | None:
        if self.allow_edit:
            return None
        return self._message(
            request,
            403,
            "Read-only",
            "This inspector is read-only: start it with 'memoryos serve --allow-edit' to edit.",
        )

    def _back(self, request: Request, user: str) -> Response:
        root = request.scope.get("root_path", "")
        agent = request.query_params.get("agent", "")
        params = {"u": user, **({"agent": agent} if agent else {})}
        return RedirectResponse(f"{root}/user?{urlencode(params)}", status_code=303)

    async def forget(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        form = await self._form(request)
        user = form.get("u", "")
        fact_id, page_id = form.get("fact") or None, form.get("page") or None
        if not user or (fact_id is None) == (page_id is None):
            return self._message(request, 400, "Nothing to forget", "The form names a user and one fact or page.")
        memory = self._scoped(request)
        try:
            await run_in_threadpool(_call(memory.forget, user_id=user, fact_id=fact_id, page_id=page_id))
        except (FactNotFoundError, PageNotFoundError) as exc:
            return self._message(request, 404, "Not found", str(exc))
        return self._back(request, user)

    async def correct(self, request: Request) -> Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        form = await self._form(request)
        user, fact_id, text = form.get("u", ""), form.get("f", ""), form.get("text", "").strip()
        if not user or not fact_id or not text:
            return self._message(request, 400, "Nothing to correct", "The form names a user, a fact and its new text.")
        memory = self._scoped(request)
        try:
            await run_in_threadpool(_call(memory.update_fact, fact_id, text, user_id=user))
        except FactNotFoundError as exc:
            return self._message(request, 404, "Not found", str(exc))
        except ValueError as exc:
            return self._message(request, 400, "Not corrected", str(exc))
        return self._back(request, user)


def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[], Any]:
    return lambda: fn(*args, **kwargs)


def build_app(memory: MemoryOS, *, token: str, allow_edit: bool, port: int | None, page_size: int = 20) -> Starlette:
    """The inspector app over ``memory`` behind the token and ``Host`` guard (see ``create_inspector_app``).

    Example:
        >>> from starlette.testclient import TestClient
        >>> app = build_app(MemoryOS(), token="t0k", allow_edit=False, port=None)
        >>> client = TestClient(app, base_url="http://127.0.0.1:8765")
        >>> client.get("/").status_code, client.get("/?token=t0k").status_code
        (403, 200)
    """
    inspector = _Inspector(memory, token, allow_edit, page_size)
    routes = [
        Route("/", inspector.users),
        Route("/user", inspector.user),
        Route("/user/thread", inspector.thread),
        Route("/user/segment", inspector.segment),
        Route("/user/fact", inspector.fact),
        Route("/user/log", inspector.log),
        Route("/user/ask", inspector.ask),
        Route("/user/forget", inspector.forget, methods=["POST"]),
        Route("/user/correct", inspector.correct, methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.add_middleware(TokenGuard, token=token, hosts=HostCheck(port))
    app.state.memory = memory
    app.state.token = token
    return app
