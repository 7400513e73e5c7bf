"""`lore tui`, the flows beyond each tab's first one: approve on a branch, validate expertise,
the keyword → hybrid switch of the learnings search, paging forth and back, a refused filter,
and a draft removed by someone else while it is open. Pilot on real stores in temp git repos."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from conftest import git
from lorebook import Lorebook
from lorebook.tui import actions as actions_tab
from lorebook.tui import sessions as sessions_tab
from lorebook.tui.app import make_app
from lorebook.tui.drafts import Ask
from lorebook.tui.sessions import TimelineScreen
from test_tui import draft, settle

START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def text_of(app: Any, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


def keys(table: DataTable[Any]) -> list[str]:
    return [str(table.coordinate_to_cell_key((i, 0)).row_key.value) for i in range(table.row_count)]


def notified(app: Any, needle: str) -> bool:
    return any(needle in n.message for n in app._notifications)


@pytest.mark.asyncio
async def test_approve_on_a_branch_leaves_the_current_one_alone(store: Path) -> None:
    book = Lorebook.open(store, env={})
    found = draft(book, "Payment retries need backoff")
    before = git(store, "rev-parse", "HEAD").strip()
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await settle(pilot, lambda: app.query_one("#drafts-table", DataTable).row_count == 1)
        await pilot.press("a")
        await settle(pilot, lambda: isinstance(app.screen, Ask))
        await pilot.press(*"review/retries", "enter")
        await settle(pilot, lambda: notified(app, "on branch review/retries"))
    assert git(store, "branch", "--show-current").strip() == "main"
    assert git(store, "rev-parse", "HEAD").strip() == before  # the current branch is untouched
    assert git(store, "rev-parse", "review/retries^").strip() == before
    assert "status: published" in git(store, "show", f"review/retries:learnings/{found}.md")
    assert f"learnings/drafts/{found}.md" not in git(
        store, "ls-tree", "-r", "--name-only", "review/retries"
    )
    assert (store / "learnings" / "drafts" / f"{found}.md").exists()  # still a draft here


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 32)])
async def test_a_draft_published_on_a_branch_is_marked_and_not_published_twice(
    store: Path, size: tuple[int, int]
) -> None:
    book = Lorebook.open(store, env={})
    found = draft(book, "Payment retries need backoff")
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        await pilot.press("4")
        table = app.query_one("#drafts-table", DataTable)
        await settle(pilot, lambda: table.row_count == 1)
        await pilot.press("a")
        await settle(pilot, lambda: isinstance(app.screen, Ask))
        await pilot.press(*"review/retries", "enter")
        await settle(pilot, lambda: notified(app, "on branch review/retries"))
        await settle(pilot, lambda: "PR" in str(table.get_row_at(0)[0]))
        assert "review/retries" in str(table.get_row_at(0)[0])
        await pilot.press("a")
        await settle(pilot, lambda: notified(app, "already published on branch review/retries"))
        assert not isinstance(app.screen, Ask)  # nothing to answer: it is not published twice
    assert git(store, "branch", "--list", "lore/learning/*").strip() == ""
    assert (store / "learnings" / "drafts" / f"{found}.md").exists()


@pytest.mark.asyncio
@pytest.mark.parametrize("verb", ["a", "x"])
async def test_a_draft_removed_by_someone_else_while_open(store: Path, verb: str) -> None:
    book = Lorebook.open(store, env={})
    found = draft(book, "Reviewed elsewhere")
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        table = app.query_one("#drafts-table", DataTable)
        await settle(pilot, lambda: table.row_count == 1)
        git(store, "rm", "-q", f"learnings/drafts/{found}.md")  # another reviewer got there first
        git(store, "commit", "-q", "-m", "rejected elsewhere")
        head = git(store, "rev-parse", "HEAD").strip()
        await pilot.press(verb)
        await settle(pilot, lambda: isinstance(app.screen, Ask))
        await pilot.press(*("" if verb == "a" else "stale"), "enter")
        await settle(pilot, lambda: any(n.severity == "error" for n in app._notifications))
        [error] = [n.message for n in app._notifications if n.severity == "error"]
        assert found in error and "\n" not in error  # one line naming the draft
        await settle(pilot, lambda: table.row_count == 0)  # the list as it is now
        assert app.is_running
    assert git(store, "rev-parse", "HEAD").strip() == head  # nothing committed


def expertise_store(store: Path) -> Lorebook:
    (store / "src" / "db").mkdir(parents=True)
    (store / "src" / "db" / "schema.sql").write_text("-- x\n")
    (store / ".expertise" / "database.yaml").write_text(
        "domain: database\noverview: Postgres\ncore_files:\n  - src/db/schema.sql\n"
        "  - src/db/gone.py\nlast_validated: '2026-11-01'\n"
    )
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "database expertise")
    return Lorebook.open(store, env={})


@pytest.mark.asyncio
async def test_validate_shows_a_summary_of_corrections(store: Path) -> None:
    app = make_app(expertise_store(store), load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("6")
        domains = app.query_one("#domains", DataTable)
        await settle(pilot, lambda: "database" in keys(domains))
        domains.move_cursor(row=keys(domains).index("database"))
        await pilot.pause()
        await pilot.press("v")
        await settle(pilot, lambda: "change" in text_of(app, "#expertise-summary"))
        summary = text_of(app, "#expertise-summary")
        assert ".expertise/database.yaml" in summary and "src/db/gone.py" in summary
        assert "gone.py" not in str(app.query_one("#expertise-yaml", Static).render())
    assert "gone.py" not in (store / ".expertise" / "database.yaml").read_text()


def long_session(store: Path, count: int) -> tuple[Lorebook, list[str]]:
    """One session of `count` actions, a millisecond apart (newest first in the actions tab)."""
    book = Lorebook.open(store, env={})
    session = book.start_session(agent="PS", project="shop", now=START)
    ids = [
        book.log("plan", session=session.id, now=START + timedelta(milliseconds=n))["id"]
        for n in range(count)
    ]
    return book, ids


@pytest.mark.asyncio
async def test_actions_page_forth_and_back(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actions_tab, "PAGE", 3)
    book, ids = long_session(store, 8)
    newest = ids[::-1]
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2", "f")  # paused: the pages stay put
        table = app.query_one("#actions-table", DataTable)
        await settle(pilot, lambda: table.row_count == 3)
        seen = [keys(table)]
        for page in (1, 2):
            await pilot.press("n")
            await settle(
                pilot, lambda page=page: app.query_one(actions_tab.ActionsTab).page == page
            )
            seen.append(keys(table))
        assert seen == [newest[0:3], newest[3:6], newest[6:8]]
        await pilot.press("n")  # past the end: a message, the last page stays
        await settle(pilot, lambda: notified(app, "no more actions"))
        assert keys(table) == newest[6:8]
        for page in (1, 0):
            await pilot.press("p")
            await settle(
                pilot, lambda page=page: app.query_one(actions_tab.ActionsTab).page == page
            )
            assert keys(table) == seen[page]
        assert "rows 1-3 · page 1" in text_of(app, "#actions-status")


@pytest.mark.asyncio
async def test_a_refused_filter_keeps_the_previous_one_and_the_follow(store: Path) -> None:
    book, _ = long_session(store, 2)
    app = make_app(book, load_model=False, follow_every=0.1)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        table = app.query_one("#actions-table", DataTable)
        await settle(pilot, lambda: table.row_count == 2)
        await pilot.press("slash", *"type=plan", "enter")
        await settle(pilot, lambda: "filters: type=plan" in text_of(app, "#actions-status"))
        await pilot.press("slash", "ctrl+u", *"since=someday", "enter")  # a bad value
        await settle(pilot, lambda: notified(app, "filters are unchanged"))
        assert "filters: type=plan" in text_of(app, "#actions-status")
        assert table.row_count == 2
        await pilot.press("slash", "ctrl+u", *"type=none", "enter", "n")  # no rows, no page 2
        await settle(pilot, lambda: notified(app, "no more actions"))
        await pilot.press("slash", "ctrl+u", *"type=plan", "enter")
        await settle(pilot, lambda: table.row_count == 2)
        added = Lorebook.open(store, env={}).log("plan", project="shop")
        await settle(pilot, lambda: table.row_count == 3)  # still following type=plan
        assert keys(table)[0] == added["id"]


@pytest.mark.asyncio
async def test_timeline_pages_forth_and_back(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions_tab, "PAGE", 3)
    book, ids = long_session(store, 7)
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: app.query_one("#sessions-table", DataTable).row_count == 1)
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, TimelineScreen))
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        shown = []
        for key in ("", "n", "n", "n", "p", "p"):
            if key:
                await pilot.press(key)
                await pilot.pause()
            shown.append([r.id for r in screen.rows])
        pages = [ids[0:3], ids[3:6], ids[6:7]]  # the timeline is oldest first
        assert shown == [*pages, pages[2], pages[1], pages[0]]  # no page past the last
        assert screen.sub_title == "7 actions · 6ms · page 1 of 3"


@pytest.mark.asyncio
async def test_learnings_keyword_until_the_model_is_ready_then_hybrid(
    search_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model (loaded once for the test session by the `embedder` fixture) is held back
    until the first results are on screen, so the switch is seen in order."""
    from lorebook.index import embed

    Lorebook.open(search_store, env={}).index.update()  # `lore index`: vectors to search
    ready = threading.Event()
    real = embed.load_embedder

    def held(*args: Any, **kwargs: Any) -> Any:
        ready.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(embed, "load_embedder", held)
    app = make_app(Lorebook.open(search_store, env={}), load_model=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("3", "slash")
        await pilot.press(*"tokens rejected", "enter")
        results = app.query_one("#learn-results", DataTable)
        await settle(pilot, lambda: results.row_count > 0, timeout=20)
        label = text_of(app, "#learn-mode")
        assert "by keyword search" in label and "loading the model" in label
        ready.set()
        await settle(pilot, lambda: "by hybrid search" in text_of(app, "#learn-mode"), timeout=60)
        assert "jwt-clock-skew" in keys(results)


@pytest.mark.asyncio
async def test_a_preview_answering_into_a_closed_pane_is_dropped(
    search_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preview worker reads the file's history off the app's thread; quitting while it
    reads (the panes close) must not fail the app when it answers into a pane that is gone."""
    book = Lorebook.open(search_store, env={})
    reading, release = threading.Event(), threading.Event()
    real = type(book.learnings).history

    def held(self: Any, learning_id: str) -> Any:
        reading.set()
        release.wait(30)
        return real(self, learning_id)

    monkeypatch.setattr(type(book.learnings), "history", held)
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("3", "slash")
        await pilot.press(*"tokens rejected", "enter")
        results = app.query_one("#learn-results", DataTable)
        await settle(pilot, lambda: results.row_count > 0 and reading.is_set(), timeout=20)
        await app.query_one("#learn-preview-pane").remove()
        release.set()
        await settle(pilot, lambda: not app.workers._workers, timeout=20)
    assert app.return_code in (None, 0)


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 32)])
async def test_search_shows_the_ranking_score_in_order_and_marks_drafts(
    store: Path, size: tuple[int, int]
) -> None:
    (store / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")
    book = Lorebook.open(store, env={})
    for title, body in (
        ("Webhook retries need idempotency keys", "Idempotency keys for webhook retries."),
        ("Idempotency in the payment queue", "Keys."),
        ("Queue backoff", "Webhook idempotency retries keys: see the payment runbook."),
    ):
        book.learnings.new(title=title, body=body, publish=True)
    drafted = book.learnings.new(title="Draft: webhook idempotency", body="Idempotency.").id
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        await pilot.press("3")
        await pilot.pause()
        await pilot.press("slash", *"webhook idempotency", "enter")
        table = app.query_one("#learn-results", DataTable)
        await settle(pilot, lambda: drafted in keys(table), timeout=20)
        shown = [int(str(table.get_row_at(i)[0]).rstrip("%")) for i in range(table.row_count)]
        assert shown == sorted(shown, reverse=True) and shown[0] == 100
        marks = {key: str(table.get_row_at(i)[2]) for i, key in enumerate(keys(table))}
        assert marks[drafted] == "DRAFT"
        assert [m for k, m in marks.items() if k != drafted] == [""] * (len(marks) - 1)


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 32)])
async def test_the_draft_preview_shows_source_tags_anchors_and_the_diff(
    store: Path, size: tuple[int, int]
) -> None:
    from textual.widgets import Markdown

    book = Lorebook.open(store, env={})
    old = book.learnings.new(title="Retries", body="Retry three times.", publish=True).id
    new = book.learnings.new(
        title="Retries need backoff",
        body="Retry with backoff.",
        tags=["payments"],
        anchors=["README.md", "pay.py"],
        supersedes=[old],
        source={"epic": "E-7", "session": "01JSESSION"},
    ).id
    (store / "pay.py").write_text("def pay():\n    return 1\n")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "learnings")
    (store / "pay.py").write_text("def pay():\n    return 2\n")  # changed after the draft
    git(store, "commit", "-q", "-am", "pay changed")
    changed = git(store, "rev-parse", "--short", "HEAD").strip()
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        await pilot.press("4")
        pane = app.query_one("#draft-preview", Markdown)
        await settle(pilot, lambda: "What it changes" in pane.source)
        text = pane.source
    assert "epic `E-7`" in text and "session `01JSESSION`" in text
    assert "payments" in text and "`README.md` (ok)" in text  # each anchor its own state
    assert f"`pay.py` (stale: changed ({changed}))" in text
    assert f"adds `learnings/{new}.md`" in text
    assert "-Retry three times." in text and "+Retry with backoff." in text


@pytest.mark.asyncio
async def test_a_listing_answering_into_a_closed_tab_is_dropped(
    search_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The learnings listing is read off the app's thread; quitting while it reads (the tab's
    widgets go) must not fail the app when it answers (`NoMatches` on `#learn-mode`, once in
    CI)."""
    book = Lorebook.open(search_store, env={})
    reading, release = threading.Event(), threading.Event()
    real = type(book.learnings).query

    def held(self: Any, **kwargs: Any) -> Any:
        reading.set()
        release.wait(30)
        return real(self, **kwargs)

    monkeypatch.setattr(type(book.learnings), "query", held)
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, reading.is_set, timeout=20)
        for widget in list(app.query("#learnings LearningsTab > *")):
            await widget.remove()
        release.set()
        await pilot.pause(0.5)
        assert app.is_running


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 32)])
async def test_drafts_outside_a_git_repository_load_without_a_warning(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    book = Lorebook.init(tmp_path, env={})  # no git: nothing can be published on a branch
    book.learnings.new(title="Payment retries need backoff", body="Retry with backoff.")
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        await pilot.press("4")
        table = app.query_one("#drafts-table", DataTable)
        await settle(pilot, lambda: table.row_count == 1)
        await pilot.press("1", "4")  # shown again: read again, and each read used to warn
        await pilot.pause()
        assert "PR" not in str(table.get_row_at(0)[0])
        assert not any("drafts" in (n.title or "") for n in app._notifications)
        assert not notified(app, "git")


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 32)])
@pytest.mark.parametrize(
    ("tab", "field"), [("1", "#sessions-filter"), ("2", "#actions-filter"), ("3", "#learn-query")]
)
async def test_keys_typed_right_after_slash_reach_the_field(
    store: Path, size: tuple[int, int], tab: str, field: str
) -> None:
    """A busy app (a model loading) takes keys in a burst: every key of the burst after `/`
    goes into the field, none to the table's hotkeys (`e` would edit, `a` approve)."""
    from textual import events
    from textual.widgets import Input

    book = Lorebook.open(store, env={})
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        burst = [(tab, tab), ("slash", "/"), *((c, c) for c in "retry")]
        for key, char in burst:  # queued together, as the keys of a busy app are
            event = events.Key(key, char)
            event.set_sender(app)
            assert app._driver is not None
            app._driver.send_message(event)
        await settle(pilot, lambda: app.query_one(field, Input).value == "retry")
        assert app.focused is app.query_one(field, Input)
