"""Progress on long work: the library reports model export/load, index builds and catalog
builds through the callback given to `Lorebook.on_progress` (counts from 0, never decreasing,
ending at the total); the CLI draws one status line on a terminal's stderr and nothing on a pipe
or under --json, and what it prints is the same either way."""

from __future__ import annotations

import os
import re
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from conftest import LORE, clean_env, lore, on_a_terminal
from lorebook import Lorebook
from lorebook.render.progress import elapsed_text, progress_line, progress_status
from search_fixtures import LEARNINGS, write_learning

Event = tuple[str, int, int]
CLEAR = "\r\x1b[K"
BOLD = "\x1b[1m"


# -- the pure formatter ------------------------------------------------------------------------
def test_a_counted_task_is_a_bar_with_counts_and_the_time_spent() -> None:
    line = progress_line("index.build", 50, 200, 75.4, width=100)
    assert line == "Indexing learnings [" + "#" * 7 + "-" * 23 + "]  25% 50/200 files 1m15s"
    full = progress_line("catalog.check", 1234, 1234, 2, width=80)
    assert "100% 1,234/1,234 shards 2s" in full and "-" not in full.split("[")[1].split("]")[0]


def test_a_one_step_task_shows_its_label_and_time() -> None:
    assert progress_line("model.export", 0, 1, 12.9) == (
        "Exporting the embedding model to ONNX (once per model)… 12s"
    )
    assert progress_line("model.load", 0, 1, 0) == "Loading the embedding model… 0s"
    assert progress_line("some.task", 0, 1, 3) == "some.task… 3s"  # unknown: its own name


@pytest.mark.parametrize("width", [1, 5, 12, 20, 30, 45, 60, 200])
def test_the_line_never_wraps(width: int) -> None:
    for task, done, total in [("index.build", 7, 2000), ("model.export", 0, 1),
                              ("catalog.build", 99_999, 1_000_001)]:  # fmt: skip
        line = progress_line(task, done, total, 3600 * 2, width=width)
        assert len(line) <= max(width - 1, 1), (width, line)


def test_color_only_when_asked() -> None:
    plain = progress_line("index.build", 3, 9, 1, color=False)
    styled = progress_line("index.build", 3, 9, 1, color=True)
    assert "\x1b" not in plain and BOLD in styled
    assert re.sub(r"\x1b\[\d+m", "", styled) == plain


def test_elapsed_text() -> None:
    assert [elapsed_text(s) for s in (-1, 0, 9.99, 59, 60, 61, 3599, 3600)] == [
        "0s", "0s", "9s", "59s", "1m00s", "1m01s", "59m59s", "60m00s"]  # fmt: skip


# -- the terminal writer ----------------------------------------------------------------------
def test_the_writer_draws_a_long_step_late_and_clears_before_other_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io
    import sys
    import time

    from lorebook.cli.status import StatusLine

    screen = io.StringIO()
    monkeypatch.setattr("sys.stderr", screen)
    line = StatusLine(screen, delay=0.2)
    line("model.load", 0, 1)
    assert screen.getvalue() == ""  # a step that ends quickly is never drawn
    deadline = time.monotonic() + 10
    while "Loading the embedding model… " not in screen.getvalue():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert sys.stderr is not screen  # while the line shows, stderr clears it first
    print("lore: warning: something", file=sys.stderr)
    assert screen.getvalue().endswith(CLEAR + "lore: warning: something\n")
    line("model.load", 1, 1)
    line("index.build", 0, 3)
    line("index.build", 3, 3)
    line.close()
    assert sys.stderr is screen
    drawn = "Indexing learnings [" + "-" * 30 + "]   0% 0/3 files 0s"
    assert screen.getvalue().endswith(drawn + CLEAR)


# -- the library's callbacks -------------------------------------------------------------------
def small_log(root: Path, sessions: int = 12) -> None:
    """A store whose log spans a few days, committed nowhere (the catalog needs no git)."""
    from datetime import UTC, datetime, timedelta

    root.mkdir(parents=True)
    book = Lorebook.init(root, env={})
    # yesterday noon: a session's few minutes never cross midnight into a second day's shard
    now = (datetime.now(UTC) - timedelta(days=1)).replace(
        hour=12, minute=0, second=0, microsecond=0
    )
    for n in range(sessions):
        at = now - timedelta(days=n % 5, hours=2)
        session = book.start_session(session_id=f"s{n}", agent="PS", project="odin", now=at)
        for k in range(3):
            session.log("commit", outcome="success", now=at + timedelta(minutes=k + 1))


def tasks(events: list[Event]) -> dict[str, list[tuple[int, int]]]:
    """Events per task, each run of a task checked: from 0, never decreasing, ending at total."""
    runs: dict[str, list[tuple[int, int]]] = {}
    for task, done, total in events:
        runs.setdefault(task, []).append((done, total))
    for task, seen in runs.items():
        assert seen[0][0] == 0, (task, seen)
        assert len({total for _, total in seen}) == 1, (task, seen)
        assert all(a[0] <= b[0] for a, b in pairwise(seen)), (task, seen)
        assert seen[-1][0] == seen[-1][1] >= 1, (task, seen)
    return runs


def recorder(book: Lorebook) -> list[Event]:
    events: list[Event] = []
    book.on_progress(lambda task, done, total: events.append((task, done, total)))
    return events


def test_catalog_builds_and_full_checks_report_shard_by_shard(tmp_path: Path) -> None:
    root = tmp_path / "store"
    small_log(root)
    book = Lorebook.open(root, env={})
    events = recorder(book)
    assert book.actions(limit=1)  # a query that builds the catalog (a short log)
    built = tasks(events)["catalog.build"]
    assert built[-1] == (13, 13)  # 12 shards, then the indexes
    events.clear()
    book.actions(limit=1)  # an incremental sync is quick: nothing to report
    assert events == []
    book.sync_catalog()  # `lore catalog`: every shard stat-ed
    assert tasks(events) == {"catalog.check": tasks(events)["catalog.check"]}
    assert events[-1] == ("catalog.check", 12, 12)
    events.clear()
    book.rebuild_catalog()
    assert set(tasks(events)) == {"catalog.build"} and events[-1][1] == 13
    book.on_progress(None)
    events.clear()
    book.rebuild_catalog()
    assert events == []


def test_index_builds_report_files(tmp_path: Path, store: Path) -> None:
    for learning_id, fields in LEARNINGS.items():
        write_learning(store, learning_id, **fields)
    for path in (store / "learnings").glob("*.md"):  # older than a second: not a racy stat,
        os.utime(path, (time.time() - 5, time.time() - 5))  # which a search would hash again
    (store / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")
    book = Lorebook.open(store, env={})
    events = recorder(book)
    book.index.update(rebuild=True)
    assert tasks(events)["index.build"][-1] == (len(LEARNINGS), len(LEARNINGS))
    events.clear()
    book.index.update()  # nothing changed: still ends at the total
    assert tasks(events)["index.build"][-1] == (len(LEARNINGS), len(LEARNINGS))
    events.clear()
    book.index.search("deploy port", mode="keyword")  # fresh: nothing to do, nothing said
    assert events == []


def test_model_export_and_load_are_steps(
    model_cache: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The export is made once per test session (the `embedder` fixture); here `export` hands
    back those bytes, to check what is reported around it without a second export."""
    from lorebook.index import onnx_embed
    from lorebook.index.embed import load_reference_embedder, resolve_model

    [exported] = model_cache.glob("*/model.onnx")
    events: list[Event] = []
    name, folder = resolve_model(None)
    loaded = onnx_embed.load_onnx_embedder(
        name, folder, load_reference_embedder, progress=lambda *e: events.append(e)
    )
    assert events == [("model.load", 0, 1), ("model.load", 1, 1)] and loaded.dim == 384
    events.clear()
    monkeypatch.setattr(onnx_embed, "_verified", lambda *a: (None, None))
    monkeypatch.setattr(onnx_embed, "export", lambda *a: exported.read_bytes())
    onnx_embed.load_onnx_embedder(
        name, folder, load_reference_embedder, progress=lambda *e: events.append(e)
    )
    assert events == [("model.export", 0, 1), ("model.export", 1, 1),
                      ("model.load", 0, 1), ("model.load", 1, 1)]  # fmt: skip


# -- the CLI on a terminal and on a pipe -------------------------------------------------------
def on_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run `lore` with stderr on a real pseudo-terminal (stdout piped): (code, stdout, stderr)."""
    return on_a_terminal([*LORE, *args], env, stream="stderr", timeout=120, raw=True)


def timeless(text: str) -> str:
    return re.sub(r"in \d+\.\d+ s", "in _ s", text)


@pytest.fixture
def cli_store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    small_log(root)
    for learning_id, fields in LEARNINGS.items():
        write_learning(root, learning_id, **fields)
    (root / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")
    return root


@pytest.mark.parametrize(
    ("args", "label"),
    [(["index", "--rebuild"], "Indexing learnings"),
     (["catalog", "--rebuild"], "Building the action catalog"),
     (["catalog"], "Checking the action catalog")],
)  # fmt: skip
def test_a_terminal_shows_progress_and_a_pipe_does_not(
    cli_store: Path, args: list[str], label: str
) -> None:
    env = clean_env(cli_store)
    if args == ["catalog"]:  # a catalog to check, not to build
        assert lore("catalog", env=env).code == 0
    code, out, err = on_terminal(args, env)
    assert code == 0, err
    assert label in err and BOLD in err
    assert err.endswith(CLEAR)  # cleared at the end: the terminal is left clean
    assert "\n" not in err  # nothing else was said: one line redrawn in place
    piped = lore(*args, env=env)
    assert piped.code == 0 and piped.err == ""
    assert timeless(piped.out) == timeless(out)


def test_a_first_search_shows_the_index_build(search_store: Path) -> None:
    """Hybrid, with the model (its export made once per test session by `search_store`)."""
    env = clean_env(search_store)
    code, out, err = on_terminal(["search", "deploy port conflict"], env)
    assert code == 0, err
    assert "Indexing learnings" in err and err.endswith(CLEAR) and "\n" not in err
    piped = lore("search", "deploy port conflict", env=env)  # the index is fresh now
    assert piped.code == 0 and piped.err == "" and piped.out == out
    assert "Deploy fails when the old container still holds port 8080" in out


def test_no_color_keeps_the_line_plain(cli_store: Path) -> None:
    code, _, err = on_terminal(["catalog", "--rebuild"], clean_env(cli_store, NO_COLOR="1"))
    assert code == 0 and "Building the action catalog [" in err and "\x1b[1m" not in err


def test_json_and_a_dumb_terminal_show_nothing(cli_store: Path) -> None:
    for args, extra in [(["catalog", "--rebuild", "--json"], {}),
                        (["index", "--rebuild", "--json"], {}),
                        (["catalog", "--rebuild"], {"TERM": "dumb"})]:  # fmt: skip
        code, _, err = on_terminal(args, clean_env(cli_store, **extra))
        assert code == 0 and err == "", (args, err)


def test_a_query_that_builds_the_catalog_shows_it(cli_store: Path) -> None:
    code, out, err = on_terminal(["actions", "--limit", "2"], clean_env(cli_store))
    assert code == 0 and "Building the action catalog" in err and err.endswith(CLEAR)
    assert out.count("commit") == 2
    code, _, err = on_terminal(["actions", "--limit", "2"], clean_env(cli_store))
    assert code == 0 and err == ""  # built once: a later query's sync shows nothing


def test_a_warning_starts_on_a_clean_line(cli_store: Path) -> None:
    (cli_store / "learnings" / "broken.md").write_text("---\nid: [unclosed\n---\nbody\n")
    code, _, err = on_terminal(["index", "--rebuild"], clean_env(cli_store))
    assert code == 0, err
    warning = err.index("lore: warning:")
    assert err[:warning].endswith(CLEAR), err  # the status line was cleared before it
    assert "Indexing learnings" in err[:warning]
    rest = err.rpartition(CLEAR)[2]
    assert rest == "" or rest.endswith("\n"), err  # no status line is left behind


# -- the TUI's learnings tab: the same callback, in its mode line ------------------------------
@pytest.mark.asyncio
async def test_the_tui_shows_the_index_build_while_warming_up(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from textual.widgets import Static

    from lorebook.tui.app import make_app
    from lorebook.tui.learnings import LearningsTab

    for learning_id, fields in LEARNINGS.items():
        write_learning(store, learning_id, **fields)
    (store / ".lore" / "config.yaml").write_text("embedding:\n  enabled: false\n")
    shown: list[str] = []
    original = LearningsTab.model_progress

    def model_progress(self: LearningsTab, task: str, done: int, total: int) -> None:
        original(self, task, done, total)
        shown.append(progress_status(task, done, total))

    monkeypatch.setattr(LearningsTab, "model_progress", model_progress)
    app = make_app(Lorebook.open(store, env={}), load_model=True)
    async with app.run_test(size=(100, 24)) as pilot:
        mode = app.query_one("#learn-mode", Static)
        deadline = time.monotonic() + 30
        while "model unavailable" not in str(mode.render()):
            assert time.monotonic() < deadline, shown
            await pilot.pause(0.05)
    total = len(LEARNINGS)
    assert shown[0] == f"Indexing learnings 0/{total} files"
    assert shown[-1] == f"Indexing learnings {total}/{total} files"


def test_progress_status() -> None:
    assert progress_status("model.export", 0, 1).startswith("Exporting the embedding model")
    assert progress_status("catalog.check", 5, 1200) == "Checking the action catalog 5/1,200 shards"
