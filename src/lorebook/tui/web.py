"""`lore tui --web`: textual-serve behind a per-run token, same-origin checks and a clean end.

A page on any other site in the user's browser can reach 127.0.0.1, and the app it would get has
Approve/Reject live. So every request must carry this run's token (in the printed URL, then in an
HttpOnly SameSite=Strict cookie) with our own Host and, when present, our own Origin; and no app
process may outlive its socket or the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import secrets
import shlex
import signal
from asyncio.subprocess import PIPE, Process
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import WSCloseCode, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from lorebook import LoreError

log = logging.getLogger("lorebook.tui.web")

GRACE = 30.0
"""Seconds the server waits for a new tab after the last one goes (a reload must not end it)."""
QUIT_WAIT = 2.0
"""Seconds an app gets to quit when asked, then again after SIGTERM, before SIGKILL."""
FORBIDDEN = "403: open the URL that `lore tui --web` printed (it holds this run's token)\n"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class _App(AppService):
    """One app process per socket, started without a shell in a process group of its own, so
    it and anything it starts end together."""

    def __init__(self, argv: list[str], **kwargs: Any) -> None:
        super().__init__(shlex.join(argv), **kwargs)
        self.argv = argv
        self._ending: asyncio.Task[None] | None = None

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        if self._ending is not None:
            raise RuntimeError("the server is stopping")
        process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        if self._ending is not None:  # ended while it started: nothing else will end it
            os.killpg(process.pid, signal.SIGKILL)
        self._process = process
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def end(self) -> None:
        """Ask the app to quit, then SIGTERM and SIGKILL its group; safe to call twice."""
        if self._ending is None:
            self._ending = asyncio.ensure_future(self._end())
        await asyncio.shield(self._ending)

    async def _end(self) -> None:
        process = self._process
        if process is None:
            return
        await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        if process.returncode is None:  # a hung app may never drain its stdin
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.send_meta({"type": "quit"}), QUIT_WAIT)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                await asyncio.wait_for(process.wait(), QUIT_WAIT)
                break
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, sig)
        await process.wait()
        if self._task is not None:  # it ends on the app's end of output
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._task, QUIT_WAIT)


class WebServer(Server):
    """textual-serve's Server with a guard in front of every route and an owned lifecycle."""

    def __init__(self, argv: list[str], *, port: int, grace: float = GRACE) -> None:
        super().__init__(shlex.join(argv), host="127.0.0.1", port=port, title="lorebook")
        self.argv = argv
        self.grace = grace
        self.token = secrets.token_urlsafe(32)
        self.apps: set[_App] = set()
        self.sockets: set[web.WebSocketResponse] = set()
        self._idle: asyncio.TimerHandle | None = None
        self._done: asyncio.Future[int] | None = None

    @property
    def cookie(self) -> str:
        return f"lore-tui-{self.port}"  # cookies ignore ports: one name per server

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/?token={self.token}"

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes(
            [
                web.get("/", self._index),
                web.get("/ws", self._socket),
                web.get("/download/{key}", self.handle_download),
                web.static("/static", self.statics_path),
            ]
        )
        return app

    def _is_token(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """403 before any handler runs (so before any app starts) unless Host is ours, Origin
        (if sent) is ours, and the token comes in the query or the cookie."""
        host = request.headers.get("Host", "").lower()
        origin = request.headers.get("Origin")
        by_query = self._is_token(request.query.get("token"))
        if (
            host not in {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
            or (origin is not None and origin.lower() != f"http://{host}")
            or not (by_query or self._is_token(request.cookies.get(self.cookie)))
        ):
            return web.Response(status=403, text=FORBIDDEN)
        response = await handler(request)
        if not response.prepared:
            response.headers["Referrer-Policy"] = "no-referrer"
            if by_query:
                response.set_cookie(
                    self.cookie, self.token, path="/", httponly=True, samesite="Strict"
                )
        return response

    async def _index(self, request: web.Request) -> web.StreamResponse:
        """The page, with its socket URL on the host it was loaded from (same origin, cookie)."""
        host = request.headers["Host"].lower()
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"ws://{host}/ws",
            "config": {"static": {"url": "/static/"}},
            "application": {"name": self.title},
        }
        response = aiohttp_jinja2.render_template("app_index.html", request, context)
        response.headers["Cache-Control"] = "no-store"
        return response

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        if self._done is None or self._done.done():
            return web.Response(status=503, text="503: lore tui --web is stopping\n")
        websocket = web.WebSocketResponse(heartbeat=15, timeout=QUIT_WAIT)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        await websocket.prepare(request)
        self._joined(websocket)
        app = _App(
            self.argv,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
        )
        self.apps.add(app)
        try:
            await app.start(width, height)
            await self._process_messages(websocket, app)
        except Exception as error:  # a bad frame or a dead app ends this tab, not the server
            log.warning("lore tui --web: a tab ended: %s", error)
        finally:  # a dropped connection cancels this handler: book-keep first, end shielded
            self._left(websocket)
            await app.end()
            self.apps.discard(app)
            with contextlib.suppress(Exception):
                await websocket.close()
        return websocket

    def _joined(self, websocket: web.WebSocketResponse) -> None:
        self.sockets.add(websocket)
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def _left(self, websocket: web.WebSocketResponse) -> None:
        self.sockets.discard(websocket)
        if not self.sockets:
            self._idle = asyncio.get_running_loop().call_later(self.grace, self._finish, 0)

    def _finish(self, code: int) -> None:
        if self._done is not None and not self._done.done():
            self._done.set_result(code)

    async def run(self) -> int:
        """Serve until SIGINT (exit 130), SIGTERM (143) or the last tab's grace ends (0)."""
        loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._finish, 128 + sig)
        runner = web.AppRunner(
            await self._make_app(),
            access_log=None,  # its lines would carry the token
            handler_cancellation=True,  # a dropped connection ends its handler, so its app
            shutdown_timeout=QUIT_WAIT,
        )
        await runner.setup()
        try:
            try:
                await web.TCPSite(runner, self.host, self.port).start()
            except OSError as exc:
                where = f"{self.host}:{self.port}"
                raise LoreError("cannot serve on {}: {}", where, exc.strerror) from None
            self.port = int(runner.addresses[0][1])
            print(f"lore tui --web: open {self.url}", flush=True)
            print("(the URL holds this run's token; Ctrl+C or SIGTERM stops the server)")
            return await self._done
        finally:
            await asyncio.gather(*(app.end() for app in list(self.apps)))
            await asyncio.gather(*(s.close(code=WSCloseCode.GOING_AWAY) for s in self.sockets))
            await runner.cleanup()


def serve(argv: list[str], *, port: int, grace: float = GRACE) -> int:
    """Serve the app that `argv` starts; returns the exit code (see `WebServer.run`)."""
    return asyncio.run(WebServer(argv, port=port, grace=grace).run())
