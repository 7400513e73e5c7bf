"""`lore tui --web` on a real store, really served: the per-run token, the Origin and Host checks,
and a clean end on SIGTERM and when the last browser tab goes (no app process left behind)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest

from conftest import LORE, assert_one_error_line, clean_env, lore

URL = re.compile(r"http://127\.0\.0\.1:(\d+)/?(?:\?token=([A-Za-z0-9_-]+))?")


@dataclass
class Served:
    proc: subprocess.Popen[str]
    port: int
    token: str
    lines: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def children() -> dict[int, list[int]]:
    """Every live process's children, from /proc (parent pid -> pids)."""
    found: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            found.setdefault(int(fields[1]), []).append(int(entry))
    return found


def descendants(pid: int) -> set[int]:
    tree, found, todo = children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@contextmanager
def serving(store: Path, *extra: str) -> Iterator[Served]:
    """Start the real `lore tui --web` and read the URL it prints; on the way out, kill whatever
    this test started that is still running."""
    env = clean_env()
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    port = free_port()
    proc = subprocess.Popen(
        [*LORE, "tui", "--root", str(store), "--web", "--port", str(port), *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    seen = threading.Event()

    def drain() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "http://" in line:
                seen.set()
        seen.set()

    threading.Thread(target=drain, daemon=True).start()
    started: set[int] = set()
    try:
        assert seen.wait(30), "the server printed no URL"
        match = next((m for m in map(URL.search, lines) if m), None)
        assert match is not None, f"no URL in {lines!r}"
        assert int(match.group(1)) == port
        served = Served(proc, port, match.group(2) or "", lines)
        yield served
    finally:
        started |= descendants(proc.pid)
        proc.kill()
        proc.wait(timeout=10)
        for pid in started:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def cookie_of(response: aiohttp.ClientResponse) -> str:
    header = response.headers.get("Set-Cookie", "")
    assert "HttpOnly" in header and "SameSite=Strict" in header, header
    return header.split(";", 1)[0]


async def get(url: str, **headers: str) -> tuple[int, str, aiohttp.ClientResponse]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(url, headers=headers, allow_redirects=False) as response,
    ):
        return response.status, await response.text(), response


async def first_frame(ws: aiohttp.ClientWebSocketResponse) -> None:
    """Wait for the app's first screen bytes: the app process really runs."""
    async with asyncio.timeout(60):
        async for message in ws:
            if message.type == aiohttp.WSMsgType.BINARY and len(message.data) > 10:
                return
    raise AssertionError("the socket closed before the app painted")


def test_requests_without_the_token_get_403(store: Path) -> None:
    async def check(served: Served) -> None:
        for path in ("/", "/?token=wrong", f"/?token={served.token}x", "/static/js/textual.js"):
            status, body, _ = await get(served.base + path)
            assert status == 403, path
            assert served.token not in body
        status, _, _ = await get(served.base + "/", Cookie=f"lore-tui-{served.port}=nope")
        assert status == 403
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(served.base + "/ws", origin=served.origin)
            assert refused.value.status == 403

    with serving(store) as served:
        asyncio.run(check(served))
        time.sleep(0.5)
        assert descendants(served.proc.pid) == set(), "a refused request started an app"


def test_the_token_opens_the_page_and_its_cookie_the_rest(store: Path) -> None:
    async def check(served: Served) -> None:
        assert len(served.token) >= 43  # secrets.token_urlsafe(32)
        status, body, response = await get(f"{served.base}/?token={served.token}")
        assert status == 200
        assert "textual" in body
        assert served.token not in body  # the page carries no token; the cookie does
        cookie = cookie_of(response)
        assert response.headers["Referrer-Policy"] == "no-referrer"
        assert f'data-session-websocket-url="ws://127.0.0.1:{served.port}/ws"' in body
        status, _, _ = await get(served.base + "/static/js/textual.js", Cookie=cookie)
        assert status == 200
        status, body, _ = await get(f"http://localhost:{served.port}/?token={served.token}")
        assert status == 200  # localhost is this server too; its socket stays same-origin
        assert f'data-session-websocket-url="ws://localhost:{served.port}/ws"' in body

    with serving(store) as served:
        asyncio.run(check(served))
    assert all(served.token not in line for line in served.lines[1:])  # printed once, not logged


def test_a_wrong_host_gets_403(store: Path) -> None:
    async def check(served: Served) -> None:
        query = f"/?token={served.token}"
        for host in (
            "evil.example",
            f"evil.example:{served.port}",
            "127.0.0.1",
            f"127.0.0.1:{served.port + 1}",
            f"localhost.evil.example:{served.port}",
        ):
            status, _, _ = await get(served.base + query, Host=host)
            assert status == 403, host
        status, _, _ = await get(served.base + query, Host=f"localhost:{served.port}")
        assert status == 200
        status, _, _ = await get(served.base + query, Origin="http://evil.example")
        assert status == 403

    with serving(store) as served:
        asyncio.run(check(served))


def test_a_foreign_origin_websocket_is_refused_and_the_right_one_runs_the_app(
    store: Path,
) -> None:
    async def check(served: Served) -> None:
        _, _, response = await get(f"{served.base}/?token={served.token}")
        cookie = cookie_of(response)
        async with aiohttp.ClientSession() as session:
            for origin in (
                "http://evil.example",
                "null",
                f"http://localhost:{served.port}",
                f"https://127.0.0.1:{served.port}",
            ):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await session.ws_connect(
                        served.base + "/ws", origin=origin, headers={"Cookie": cookie}
                    )
                assert refused.value.status == 403, origin
            await asyncio.sleep(0.5)
            assert descendants(served.proc.pid) == set(), "a refused socket started an app"
            async with session.ws_connect(
                served.base + "/ws?width=80&height=24",
                origin=served.origin,
                headers={"Cookie": cookie},
            ) as ws:
                await first_frame(ws)
                apps = descendants(served.proc.pid)
                assert apps
                for pid in apps:  # the token reaches neither the app's command line nor its env
                    for name in ("cmdline", "environ"):
                        assert served.token.encode() not in Path(f"/proc/{pid}/{name}").read_bytes()

    with serving(store) as served:
        asyncio.run(check(served))


@pytest.mark.parametrize(
    "sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"]
)
def test_a_signal_ends_the_server_and_every_app(store: Path, sig: int, code: int) -> None:
    async def connect_and_signal(served: Served) -> set[int]:
        url = f"{served.base}/ws?width=80&height=24&token={served.token}"
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(url, origin=served.origin) as ws,
        ):
            await first_frame(ws)
            apps = descendants(served.proc.pid)
            assert apps
            served.proc.send_signal(sig)
            started = time.monotonic()
            while served.proc.poll() is None and time.monotonic() - started < 5:
                await asyncio.sleep(0.1)
            assert served.proc.poll() is not None, "a signal did not end it with a tab open"
            return apps

    with serving(store) as served:
        apps = asyncio.run(connect_and_signal(served))
        assert served.proc.wait(timeout=5) == code
        wait_until(lambda: not any(alive(pid) for pid in apps), 5, "an app process outlived it")


def test_the_server_exits_after_the_last_client_and_its_grace(store: Path) -> None:
    async def visit(served: Served) -> None:
        async with aiohttp.ClientSession() as session:
            url = f"{served.base}/ws?width=80&height=24&token={served.token}"
            async with session.ws_connect(url, origin=served.origin) as ws:
                await first_frame(ws)
            # a reload: a new tab within the grace period keeps the server up
            async with session.ws_connect(url, origin=served.origin) as ws:
                await first_frame(ws)
                served_apps.update(descendants(served.proc.pid))

    served_apps: set[int] = set()
    with serving(store, "--grace", "2") as served:
        time.sleep(3)
        assert served.proc.poll() is None, "it must wait for a first client"
        asyncio.run(visit(served))
        left = time.monotonic()
        assert served.proc.wait(timeout=15) == 0
        assert time.monotonic() - left >= 1.5  # not before the grace period
        wait_until(lambda: not any(alive(p) for p in served_apps), 5, "an app outlived it")


def test_an_app_that_does_not_quit_is_killed_when_its_tab_goes(store: Path) -> None:
    async def visit(served: Served) -> set[int]:
        async with aiohttp.ClientSession() as session:
            url = f"{served.base}/ws?width=80&height=24&token={served.token}"
            async with session.ws_connect(url, origin=served.origin) as ws:
                await first_frame(ws)
                apps = descendants(served.proc.pid)
                for pid in apps:  # a hung app: it cannot read "quit" any more
                    os.kill(pid, signal.SIGSTOP)
        return apps

    with serving(store, "--grace", "60") as served:
        apps = asyncio.run(visit(served))
        assert apps
        wait_until(lambda: not any(alive(p) for p in apps), 10, "a hung app outlived its tab")
        assert served.proc.poll() is None  # the server itself waits out its grace period


def test_a_busy_port_or_a_bad_grace_is_one_error_line(store: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        busy = lore("tui", "--web", "--port", port, cwd=store, env=clean_env(), timeout=30)
        assert_one_error_line(busy, f"cannot serve on 127.0.0.1:{port}")
    for grace in ("-1", "nan", "inf"):
        assert_one_error_line(lore("tui", "--web", "--grace", grace, cwd=store), "--grace")
    assert_one_error_line(lore("tui", "--web", "--port", "70000", cwd=store), "--port")


async def _tab_centre(store: Path, tab: str, size: tuple[int, int]) -> tuple[int, int]:
    """Where a tab's label is drawn at `size`: the same app laid out by Pilot."""
    from lorebook import Lorebook
    from lorebook.tui.app import make_app

    app = make_app(Lorebook.open(store, env={}), load_model=False)
    async with app.run_test(size=size):
        region = app.query_one(f"#--content-tab-{tab}").region
        return region.x + region.width // 2, region.y + region.height // 2


async def _screen_until(ws: aiohttp.ClientWebSocketResponse, text: str, timeout: float) -> str:
    """The app's output, read until `text` shows (escape sequences and all)."""
    seen = b""
    try:
        async with asyncio.timeout(timeout):
            async for message in ws:
                if message.type == aiohttp.WSMsgType.BINARY:
                    seen += message.data
                    if text.encode() in seen:
                        return seen.decode("utf-8", "replace")
                elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                    break
    except TimeoutError:
        pass
    raise AssertionError(f"{text!r} never showed; the app said {seen[-400:]!r}")


def test_a_clicked_tab_takes_its_keys_and_e_edits_a_draft_without_ending_the_session(
    store: Path,
) -> None:
    """In the browser the app cannot give the terminal to $EDITOR (textual-serve cannot
    suspend): `e` once ended the web session. A click on the Drafts tab, `e`, typed text and
    ctrl+s now edit the draft in the app, and the session goes on."""
    from lorebook import Lorebook

    book = Lorebook.open(store, env={})
    made = book.learnings.new(title="Retry payments", body="Retry the call with backoff.")
    path = store / "learnings" / "drafts" / f"{made.id}.md"
    x, y = asyncio.run(_tab_centre(store, "drafts", (80, 24)))

    async def edit(served: Served) -> None:
        async with aiohttp.ClientSession() as session:
            url = f"{served.base}/ws?width=80&height=24&token={served.token}"
            async with session.ws_connect(url, origin=served.origin) as ws:
                await first_frame(ws)
                await _screen_until(ws, "Sessions", 30)
                click = f"\x1b[<0;{x + 1};{y + 1}M\x1b[<0;{x + 1};{y + 1}m"  # SGR, 1-based
                await ws.send_json(["stdin", click])
                await _screen_until(ws, "Retry payments", 30)
                await ws.send_json(["stdin", "e"])  # the Drafts pane has the keys at once
                await _screen_until(ws, "editing", 30)
                await _screen_until(ws, "Retry the call with backoff.", 30)  # the text area
                await asyncio.sleep(0.5)
                # keys as a person types them (a pause between), not one burst of bytes
                for keys in (
                    "\x1b[6~",
                    "\x1b[6~",
                    "\x1b[F",
                    "\r",
                    "Edited in the browser.",
                    "\x13",
                ):  # pagedown, pagedown, end, enter, text, ctrl+s
                    await ws.send_json(["stdin", keys])
                    await asyncio.sleep(0.3)
                async with asyncio.timeout(30):  # the screen's words come split by escapes
                    while "Edited in the browser." not in path.read_text():
                        await ws.receive(timeout=1)
                apps = descendants(served.proc.pid)
                assert apps and all(alive(pid) for pid in apps), "the session ended"

    with serving(store, "--grace", "60") as served:
        asyncio.run(edit(served))
    assert Lorebook.open(store, env={}).learnings.get(made.id).title == "Retry payments"
