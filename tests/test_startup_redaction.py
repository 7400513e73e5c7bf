"""Start-up error lines of the skins are redacted with the store's rules (issue 23, case 4).

`lore hooks`, `lore mcp` and `lore tui` print one error line when their arguments are bad or
the store cannot be opened, and the TUI shows a failed action as a notification. Each echoes
what the user typed, so each must use the store's sanitizer (`lorebook.store_sanitizer`, its
`redaction.extra_patterns` included), not the process-wide default one: a token only the store
knows is redacted in the record, and must not be printed in clear either.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LORE, clean_env, git, lore
from lorebook import Lorebook, store_sanitizer
from test_hardening_messages import ITK, _configured
from test_tui import settle

MARKER = "[REDACTED:internal_token]"


def _one_redacted_error_line(code: int, err: str) -> None:
    assert code == 1 and "Traceback" not in err, err
    assert ITK not in err and ITK[:12] not in err, err
    assert MARKER in err and err.startswith("lore: error: "), err


def test_store_sanitizer_is_the_stores_and_none_without_a_store(
    tmp_path: Path, store: Path
) -> None:
    sanitizer = store_sanitizer(_configured(store), {})
    assert sanitizer is not None and MARKER in sanitizer.redact_text(ITK)[0]
    assert store_sanitizer(None, clean_env(store)) is not None  # LORE_ROOT
    assert store_sanitizer(tmp_path / "nowhere", {}) is None  # the default rules then


@pytest.mark.parametrize(
    "args",
    [
        ("hooks", "install", ITK),
        ("hooks", "status", "--scope", ITK),
        ("hooks", ITK),
    ],
)
def test_lore_hooks_errors_use_the_stores_extra_patterns(
    store: Path, args: tuple[str, ...]
) -> None:
    run = lore(*args, env=clean_env(_configured(store)))
    _one_redacted_error_line(run.code, run.err)
    assert re.search(r"see `lore hooks( \w+)? --help`\)", run.err), run.err


def test_lore_mcp_start_up_errors_use_the_stores_extra_patterns(store: Path) -> None:
    """The real server over stdio, started with a bad argument: it answers nothing on stdout
    (the client sees a closed stream) and says why on stderr, redacted."""
    env = clean_env(_configured(store))
    for args in (("mcp", ITK), ("mcp", "--list-tools", "--root", str(store), ITK)):
        done = subprocess.run(
            [*LORE, *args], input="", env=env, capture_output=True, text=True, timeout=60
        )
        assert done.stdout == "", done.stdout
        _one_redacted_error_line(done.returncode, done.stderr)
        assert "(see `lore mcp --help`)" in done.stderr


def test_lore_tui_start_up_errors_use_the_stores_extra_patterns(store: Path) -> None:
    env = clean_env(_configured(store))
    for args in (
        ("tui", "--port", ITK),
        ("tui", "--root", str(store), "--grace", ITK),
        ("tui", ITK),
    ):
        run = lore(*args, env=env)
        _one_redacted_error_line(run.code, run.err)
        assert "(see `lore tui --help`)" in run.err, run.err


@pytest.mark.asyncio
async def test_a_tui_notification_uses_the_stores_extra_patterns(store: Path) -> None:
    from lorebook.tui.app import make_app

    book = Lorebook.open(_configured(store), env={})
    book.log("plan", outcome="success")
    app = make_app(book, load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        await pilot.press("slash", *f"since={ITK}", "enter")
        await settle(pilot, lambda: any(n.severity == "error" for n in app._notifications))
        [shown] = [n.message for n in app._notifications if n.severity == "error"]
    assert ITK not in shown and ITK[:12] not in shown, shown
    assert f"since '{MARKER}': expected a duration" in shown, shown


def test_skins_reach_store_sanitizer_through_the_public_api() -> None:
    """The skins import only `lorebook` and `lorebook.render` (tests/test_layers.py)."""
    import lorebook

    assert "store_sanitizer" in lorebook.__all__
    assert sys.modules[store_sanitizer.__module__] is lorebook


def test_lore_mcp_call_not_logged_warning_uses_the_stores_rules(tmp_path: Path) -> None:
    """A store the server cannot log into (its action log is a file): the call is answered and
    a warning printed, whose failure names the store's path, redacted like any error line."""
    from test_mcp_robust import RawServer

    root = tmp_path / f"work-{ITK}"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    book = Lorebook.init(root, env={})
    _configured(root)
    actionlog = book.layout.actionlog
    shutil.rmtree(actionlog)
    actionlog.write_text("not a folder\n")
    server = RawServer(root)
    try:
        answer = server.call("get_expertise", '{"domain": "none"}')
        assert "result" in answer or "error" in answer, answer
        _, err = server.close()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    assert "call not logged" in err, err
    assert ITK not in err and ITK[:12] not in err, err
    assert MARKER in err, err
