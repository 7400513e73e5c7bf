"""`e` on a draft where the app cannot hand the terminal to $EDITOR (the web view, Pilot's
headless driver) or none is set: the draft is edited in the app and saved through the library.
A tab chosen with the mouse takes its keys at once. The expertise status line speaks of the
domain under the cursor. Each at 80x24 and 120x32."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Static, TextArea

from lorebook import Lorebook
from lorebook.tui.app import make_app
from lorebook.tui.drafts import Ask
from lorebook.tui.editor import EditScreen
from test_tui import draft, seeded, settle

SIZES = [(80, 24), (120, 32)]


async def open_editor(pilot: Any, app: Any) -> TextArea:
    """`e` on the one draft of the Drafts tab: the editor in the app, its text area."""
    await pilot.press("4")
    await settle(pilot, lambda: app.query_one("#drafts-table", DataTable).row_count == 1)
    await pilot.press("e")
    await settle(pilot, lambda: isinstance(app.screen, EditScreen))
    return app.screen.query_one(TextArea)


def draft_file(store: Path, found: str) -> Path:
    (path,) = (store / "learnings" / "drafts").glob(f"{found}.md")
    return path


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x32"])
@pytest.mark.parametrize("editor", [None, "true"], ids=["no-editor", "cannot-suspend"])
async def test_a_draft_is_edited_in_the_app_and_saved_through_the_library(
    store: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int], editor: str | None
) -> None:
    """With no $EDITOR, or one the app cannot suspend for (Pilot's driver, like the web's,
    cannot), `e` opens the editor in the app instead of failing or ending the app."""
    book = Lorebook.open(store, env={})
    found = draft(book, "Retry payments")
    monkeypatch.delenv("VISUAL", raising=False)
    if editor is None:
        monkeypatch.delenv("EDITOR", raising=False)
    else:
        monkeypatch.setenv("EDITOR", editor)
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        area = await open_editor(pilot, app)
        assert "Retry the payment call with backoff." in area.text
        secret = "ghp_" + "b" * 36
        area.text = area.text.replace(
            "Retry the payment call with backoff.", f"Retry with backoff and jitter. {secret}"
        )
        await pilot.press("ctrl+s")
        await settle(pilot, lambda: not isinstance(app.screen, EditScreen))
        assert app.is_running
        text = draft_file(store, found).read_text()
        assert "Retry with backoff and jitter." in text
        assert secret not in text  # redacted on the way to disk
        assert book.learnings.get(found).title == "Retry payments"  # still a valid draft


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x32"])
async def test_an_invalid_edit_is_refused_with_its_line_and_nothing_is_lost(
    store: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    book = Lorebook.open(store, env={})
    found = draft(book, "Retry payments")
    before = draft_file(store, found).read_bytes()
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        area = await open_editor(pilot, app)
        broken = area.text.replace("title: Retry payments", "title: [unclosed")
        area.text = broken
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, EditScreen)  # still editing
        error = str(app.screen.query_one("#edit-error", Static).render())
        assert f"learnings/drafts/{found}.md:" in error and "\n" not in error.strip()
        assert app.screen.query_one(TextArea).text == broken  # what was typed stays
        assert draft_file(store, found).read_bytes() == before  # the file as it was
        await pilot.press("escape")
        await settle(pilot, lambda: not isinstance(app.screen, EditScreen))
        assert draft_file(store, found).read_bytes() == before


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x32"])
async def test_a_tab_clicked_with_the_mouse_takes_its_keys_at_once(
    store: Path, size: tuple[int, int]
) -> None:
    """A click on a tab left the focus on the tab bar, where `/`, `a`, `x`, `e`, `n`, `p` did
    nothing and a typed filter went nowhere."""
    book = seeded(store)
    draft(book, "Retry payments")
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        await pilot.click("#--content-tab-drafts")
        await settle(pilot, lambda: app.query_one("#drafts-table", DataTable).row_count == 1)
        await pilot.press("x")
        await settle(pilot, lambda: isinstance(app.screen, Ask))
        await pilot.press("escape")
        await settle(pilot, lambda: not isinstance(app.screen, Ask))
        await pilot.click("#--content-tab-actions")
        await pilot.pause()
        await pilot.press("slash", *"type=deploy", "enter")
        await pilot.pause()
        box = app.query_one("#actions Input", Input)
        assert box.value == "type=deploy"
        table = app.query_one("#actions DataTable", DataTable)
        await settle(pilot, lambda: table.row_count == 1)


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x32"])
async def test_the_expertise_status_line_speaks_of_the_domain_under_the_cursor(
    store: Path, size: tuple[int, int]
) -> None:
    book = Lorebook.open(store, env={})
    app = make_app(book, load_model=False)
    async with app.run_test(size=size) as pilot:
        await pilot.press("6")
        table = app.query_one("#domains", DataTable)
        await settle(pilot, lambda: table.row_count >= 2)
        first = str(table.get_row_at(0)[0])
        second = str(table.get_row_at(1)[0])
        status = app.query_one("#expertise-summary", Static)
        await pilot.press("v")
        await settle(pilot, lambda: f"{first}.yaml" in str(status.render()))
        await pilot.press("down")
        await settle(pilot, lambda: second in str(status.render()))
        assert f"{first}.yaml" not in str(status.render())
        await pilot.press("up")  # the first's validation is kept for when it comes back
        await settle(pilot, lambda: f"{first}.yaml" in str(status.render()))
