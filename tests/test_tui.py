"""`lore tui`: each tab's main flow through Textual's Pilot on real stores in temp git repos,
the bad inputs of the issue, and one smoke test in a real terminal (tmux, 80x24)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static, TabbedContent

from conftest import assert_one_error_line, clean_env, git, lore, require_real
from lorebook import Lorebook
from lorebook.tui.app import make_app
from lorebook.tui.drafts import Ask
from lorebook.tui.sessions import ResumeScreen, SessionsTab, TimelineScreen


def seeded(store: Path) -> Lorebook:
    book = Lorebook.open(store, env={})
    with book.session(agent="PS", project="shop") as session:
        session.log("plan", context={"task": "checkout", "token": "ghp_" + "a" * 36})
        session.log("deploy", outcome="failure", error="boom", epic="epic-1")
    return book


def draft(book: Lorebook, title: str) -> str:
    made = book.learnings.new(title=title, body="Retry the payment call with backoff.")
    git(book.root, "add", "-A")
    git(book.root, "commit", "-q", "-m", f"draft {title}")
    return made.id


async def settle(pilot: object, until: object, timeout: float = 5.0) -> None:
    """Pause until `until()` is true (workers run in threads)."""
    deadline = time.monotonic() + timeout
    while not until():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the app never reached the expected state"
        await pilot.pause(0.05)  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_sessions_timeline_detail_and_resume(store: Path) -> None:
    book = seeded(store)
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one("#sessions-table", DataTable)
        await settle(pilot, lambda: table.row_count == 1)  # read in a worker after first paint
        assert "ended" in str(table.get_row_at(0)[-1])
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, TimelineScreen))
        timeline = app.screen.query_one("#timeline", DataTable)
        assert [str(timeline.get_row_at(i)[0]) for i in range(timeline.row_count)] == [
            "  ✓ plan",
            "  ✗ deploy epic-1",
        ]
        detail = app.screen.detail_text  # type: ignore[attr-defined]
        assert "checkout" in detail
        assert "ghp_" + "a" * 36 not in detail  # redacted by the facade
        await pilot.press("r")
        await settle(pilot, lambda: isinstance(app.screen, ResumeScreen))
        await pilot.press("escape", "escape")
        await settle(pilot, lambda: not isinstance(app.screen, TimelineScreen))


@pytest.mark.asyncio
async def test_actions_filter_paging_and_live_follow(store: Path) -> None:
    book = seeded(store)
    app = make_app(book, load_model=False, follow_every=0.1)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        table = app.query_one("#actions-table", DataTable)
        await settle(pilot, lambda: table.row_count == 2)
        await pilot.press("slash", *"outcome=failure", "enter")
        await settle(pilot, lambda: table.row_count == 1)
        assert str(table.get_cell(table.coordinate_to_cell_key((0, 0)).row_key, "type")) == "deploy"
        await pilot.press("slash", "ctrl+u", *"bogus=1", "enter")  # a bad filter: a message
        await settle(pilot, lambda: any("bogus" in n.message for n in app._notifications))
        assert table.row_count == 1
        await pilot.press("slash", "ctrl+u", "enter")
        await settle(pilot, lambda: table.row_count == 2)
        added = Lorebook.open(store, env={}).log("commit", outcome="success", project="shop")
        await settle(pilot, lambda: table.row_count == 3)  # followed without a restart
        assert table.coordinate_to_cell_key((0, 0)).row_key.value == added["id"]


@pytest.mark.asyncio
async def test_approve_publishes_through_git(store: Path) -> None:
    book = Lorebook.open(store, env={})
    found = draft(book, "Payment retries need backoff")
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await settle(pilot, lambda: app.query_one("#drafts-table", DataTable).row_count == 1)
        await pilot.press("a")
        await settle(pilot, lambda: isinstance(app.screen, Ask))
        await pilot.press("enter")  # empty branch: the current branch
        await settle(pilot, lambda: not list((store / "learnings" / "drafts").glob("*.md")))
        await settle(pilot, lambda: any("published" in n.message for n in app._notifications))
        await pilot.pause()
        assert app.query_one("#drafts-table", DataTable).row_count == 0
    assert list((store / "learnings").glob(f"*{found}*.md")) or list(
        (store / "learnings").rglob(f"{found}.md")
    )
    assert found in git(store, "log", "-1", "--format=%s") or "ublish" in git(
        store, "log", "-1", "--format=%s"
    )


@pytest.mark.asyncio
async def test_reject_asks_a_reason_and_removes_through_git(store: Path) -> None:
    book = Lorebook.open(store, env={})
    found = draft(book, "A duplicate lesson")
    before = git(store, "rev-parse", "HEAD")
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await settle(pilot, lambda: app.query_one("#drafts-table", DataTable).row_count == 1)
        await pilot.press("x")
        await settle(pilot, lambda: isinstance(app.screen, Ask))
        await pilot.press("enter")  # no reason: refused, still asking
        await settle(pilot, lambda: any("required" in n.message for n in app._notifications))
        assert isinstance(app.screen, Ask)
        assert list((store / "learnings" / "drafts").glob("*.md"))
        await pilot.press(*"duplicate", "enter")
        await settle(pilot, lambda: any("rejected" in n.message for n in app._notifications))
        assert not list((store / "learnings" / "drafts").glob("*.md"))
    assert git(store, "rev-parse", "HEAD") != before
    assert found not in git(store, "ls-files")


@pytest.mark.asyncio
async def test_edit_without_editor_and_a_draft_removed_meanwhile(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = Lorebook.open(store, env={})
    found = draft(book, "Edited elsewhere")
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await pilot.pause()
        await pilot.press("e")  # no $EDITOR: the editor in the app
        await settle(pilot, lambda: type(app.screen).__name__ == "EditScreen")
        await pilot.press("escape")
        await settle(pilot, lambda: type(app.screen).__name__ != "EditScreen")
        monkeypatch.setenv("EDITOR", "true")
        for path in (store / "learnings" / "drafts").glob(f"*{found}*"):
            path.unlink()  # someone else removed it
        await pilot.press("e")
        await settle(pilot, lambda: app.query_one("#drafts-table", DataTable).row_count == 0)
        assert app.is_running


@pytest.mark.asyncio
async def test_learnings_keyword_search_preview(store: Path) -> None:
    (store / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")
    book = Lorebook.open(store, env={})
    book.learnings.new(
        title="Stripe webhooks need idempotency keys",
        body="## Problem\nDouble charges.\n## Key Takeaway\nUse idempotency keys.",
        publish=True,
    )
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("3")
        await pilot.pause()
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press(*"idempotency", "enter")
        table = app.query_one("#learn-results", DataTable)
        await settle(pilot, lambda: table.row_count == 1, timeout=20)
        assert "Stripe" in str(table.get_row_at(0)[1])


@pytest.mark.asyncio
async def test_reports_switch_period_and_expertise(store: Path) -> None:
    book = seeded(store)
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("5")
        await pilot.pause()
        assert "last 7 days" in str(app.query_one("#report-title").render())
        await pilot.press("t")
        await pilot.pause()
        assert "last 30 days" in str(app.query_one("#report-title").render())
        await pilot.press("6")
        await pilot.pause()
        assert app.query_one("#domains", DataTable).row_count >= 1
        await pilot.press("question_mark")
        await settle(pilot, lambda: type(app.screen).__name__ == "HelpScreen")


@pytest.mark.asyncio
async def test_torn_lines_warn_and_tiny_terminal(store: Path) -> None:
    book = seeded(store)
    shard = next((store / "actionlog").rglob("*.jsonl"))
    with shard.open("a", encoding="utf-8") as out:
        out.write('{"kind": "action", "torn\n')
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        await settle(pilot, lambda: any("skipped" in (n.title or "") for n in app._notifications))
        assert app.query_one("#actions-table", DataTable).row_count == 2
        await pilot.resize_terminal(30, 8)  # a tiny terminal: still usable, never a crash
        for key in "123456":
            await pilot.press(key)
            assert app.query_one(TabbedContent).active
        assert app.is_running


@pytest.mark.asyncio
async def test_broken_draft_is_a_warning(store: Path) -> None:
    book = Lorebook.open(store, env={})
    draft(book, "A fine draft")
    (store / "learnings" / "drafts" / "broken.md").write_text("---\ntitle: [unclosed\n---\n")
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await pilot.pause()
        assert app.query_one("#drafts-table", DataTable).row_count == 1
        assert any("drafts" in (n.title or "") for n in app._notifications)


@pytest.mark.asyncio
async def test_empty_store_shows_the_way_in(store: Path) -> None:
    app = make_app(Lorebook.open(store, env={}), load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: app.query_one(SessionsTab).loaded)
        assert app.query_one("#sessions-empty").display
        assert "lore demo" in str(app.query_one("#sessions-empty", Static).render())


def test_uninitialized_store_is_one_error_line(repo: Path) -> None:
    result = lore("tui", "--root", str(repo), cwd=repo, env=clean_env())
    assert_one_error_line(result, "lore init")


def test_help_lists_tui(repo: Path) -> None:
    assert "tui" in lore("--help", cwd=repo, env=clean_env()).out


@contextlib.contextmanager
def demo_under_tmux(tmp_path: Path) -> Iterator[Callable[[str], None]]:
    """`lore tui` on a `lore demo` store in a real terminal (tmux, 80x24), its sessions shown;
    yields `wait_for(text)`, which waits (on the screen, not a clock) until the text shows."""
    if shutil.which("tmux") is None:
        require_real("tmux is not installed")
    demo = tmp_path / "demo"
    assert lore("demo", str(demo), cwd=tmp_path, env=clean_env(), timeout=300).code == 0
    name = f"lore-tui-{os.getpid()}"
    env = clean_env()
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    command = f"{sys.executable} -m lorebook tui --root {demo}"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", command],
        check=True,
        env=env,
    )
    deadline = time.monotonic() + 90  # a loaded machine

    def screen() -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True
        ).stdout

    def wait_for(text: str) -> None:
        while text not in screen():
            assert time.monotonic() < deadline, screen()
            time.sleep(0.2)

    try:
        wait_for("Sessions")
        wait_for("consilio")
        yield wait_for
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False)


def send_keys(text: str) -> None:
    """`text` typed into the tmux terminal at once (one write: the app reads it as a burst)."""
    subprocess.run(["tmux", "send-keys", "-t", f"lore-tui-{os.getpid()}", "-l", text], check=True)


def test_under_tmux_at_80x24(tmp_path: Path) -> None:
    with demo_under_tmux(tmp_path) as wait_for:
        send_keys("5")
        wait_for("Actions per day")


def test_keys_typed_at_once_under_tmux_reach_the_search_box(tmp_path: Path) -> None:
    """A terminal hands a burst of keys to the app in one read: a tab's number, `/` and the
    query typed at once (the model starts loading as the tab opens) all reach the box."""
    with demo_under_tmux(tmp_path) as wait_for:
        send_keys("3/xaez")
        wait_for("xaez")
        send_keys("q")  # still typing into the box: not the app's `q` (quit)
        wait_for("xaezq")


# -- snapshots of the main screens (pytest-textual-snapshot; `--snapshot-update` accepts) --------
FIXED = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)


def fixed_store(store: Path) -> Lorebook:
    book = Lorebook.open(store, env={})
    started = book.start_session(agent="PS", project="shop", session_id="S-1", now=FIXED)
    book.log("plan", session=started.id, outcome="success", now=FIXED + timedelta(minutes=1))
    book.log(
        "deploy",
        session=started.id,
        outcome="failure",
        error="boom",
        epic="epic-1",
        now=FIXED + timedelta(minutes=2),
    )
    book.end_session(started.id, now=FIXED + timedelta(minutes=3))
    return book


@pytest.mark.parametrize("keys", [[], ["question_mark"]], ids=["sessions", "help"])
def test_snapshot(store: Path, snap_compare: Any, keys: list[str]) -> None:
    app = make_app(fixed_store(store), load_model=False)

    async def steady(pilot: Any) -> None:
        app.sub_title = "a store"
        await settle(pilot, lambda: app.query_one(SessionsTab).loaded)
        await pilot.pause()

    assert snap_compare(app, press=keys, terminal_size=(80, 24), run_before=steady)


@pytest.mark.asyncio
async def test_no_color_is_respected(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(seeded(store), load_model=False)
    assert app.no_color  # Textual renders in monochrome
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one("#sessions-table", DataTable)
        await settle(pilot, lambda: table.row_count == 1)


def test_bad_option_is_one_error_line(store: Path) -> None:
    assert_one_error_line(lore("tui", "--port", "x", cwd=store, env=clean_env()), "--port")
