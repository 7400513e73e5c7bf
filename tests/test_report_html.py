"""`lore report --html`: one self-contained page, escaped and redacted, rendered by a real
browser; and the report's durations for people and the internal actions it says it left out."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, lore, require_real
from lorebook import Lorebook

NOW = datetime.now(UTC).replace(microsecond=0)
SECRET = "ghp_" + "A1b2C3d4" * 5
HOSTILE = "<script>alert('x')</script>"
DAYS = [(NOW - timedelta(days=n)).strftime("%m-%d") for n in (1, 2, 3)]


@pytest.fixture
def history(store: Path) -> Path:
    """Three days of work: commits (30m 40s each), failed deploys with a hostile error and a
    secret, searches (lorebook's own bookkeeping), and a line an agent appended itself with a
    hostile project name and error (a hostile type is refused by every reader)."""
    book = Lorebook.open(store, env={})
    for n in (1, 2, 3):
        at = NOW - timedelta(days=n)
        session = book.start_session(session_id=f"ps-{n}", agent="PS", project="consilio",
                                     now=at - timedelta(hours=1))  # fmt: skip
        session.log("commit", duration_s=1840.0, now=at - timedelta(minutes=50))
        session.log("deploy", outcome="failure", error=f"{HOSTILE} token {SECRET}",
                    now=at - timedelta(minutes=40))  # fmt: skip
        for minute in range(n):
            session.log("search", now=at - timedelta(minutes=30 - minute))
    shard = next((store / "actionlog").rglob("ps-1.jsonl"))
    raw = dict(json.loads(shard.read_text().splitlines()[-1]))
    raw.update(id=raw["id"][:-4] + "ZZZZ", type="deploy", project=HOSTILE, outcome="failure",
               error=HOSTILE)  # fmt: skip
    with shard.open("a") as handle:
        handle.write(json.dumps(raw, separators=(",", ":"), sort_keys=True) + "\n")
    return store


def _html(root: Path, *args: str) -> str:
    out = root.parent / "report.html"
    done = lore("report", "--days", "7", "--html", str(out), *args, env=clean_env(root))
    assert done.code == 0, done.err
    assert f"HTML report written to {out}" in done.out
    return out.read_text(encoding="utf-8")


def test_html_report_is_one_self_contained_escaped_redacted_file(history: Path) -> None:
    page = _html(history)
    assert list(history.parent.glob("*.html")) == [history.parent / "report.html"]
    assert not list(history.parent.glob(".report.html.*"))  # no temp file left behind
    assert page.startswith("<!DOCTYPE html>")
    for outside in ("http://", "https://", "src=", "<link", "<script", "@import", "url("):
        assert outside not in page, outside
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert SECRET not in page and "[REDACTED:github_token]" in page
    assert "<svg" in page and 'class="bar-total"' in page and 'class="bar-failure"' in page
    for label in DAYS:
        assert 'class="day"' in page and f">{label}</text>" in page
    assert "30m 40s" in page and "1840" not in page
    assert "Left out: 6 internal actions (search 6)" in page
    for total in ("<b>3</b>sessions", "<b>7</b>actions", '<b class="fail">4</b>failures'):
        assert total in page, total


def test_text_report_prints_durations_for_people(history: Path) -> None:
    done = lore("report", "--days", "7", env=clean_env(history))
    assert done.code == 0, done.err
    assert "commit  avg 30m 40s  max 30m 40s  (n=3)" in done.out
    assert "1840.000 s" not in done.out
    day = (NOW - timedelta(days=1, minutes=50)).strftime("%Y-%m-%d")
    written = lore("report", "daily", "--date", day, "--json", env=clean_env(history))
    assert written.code == 0, written.err
    daily = (history / json.loads(written.out)["path"]).read_text()
    assert "| commit | 1 | 30m 40s | 30m 40s |" in daily and "1840" not in daily


@pytest.mark.parametrize("catalog", [True, False])
def test_report_says_what_internal_actions_it_left_out(history: Path, catalog: bool) -> None:
    if not catalog:
        (history / ".lore" / "config.yaml").write_text("catalog:\n  enabled: false\n")
    env = clean_env(history)
    listed = lore("actions", "--since", "7d", "--limit", "1000", "--json", env=env)
    every = json.loads(listed.out)
    report = json.loads(lore("report", "--days", "7", "--json", env=env).out)
    left = report["internal_left_out"]
    assert left["count"] == 6 and left["by_type"] == [{"type": "search", "count": 6}]
    assert "bookkeeping" in left["why"]
    assert report["summary"]["total_actions"] + left["count"] == len(every)  # they reconcile
    text = lore("report", "--days", "7", env=env).out
    assert "Left out: 6 internal actions (search 6), lorebook's own bookkeeping" in text
    kept = json.loads(lore("report", "--days", "7", "--include-internal", "--json", env=env).out)
    assert kept["internal_left_out"] is None
    assert kept["summary"]["total_actions"] == len(every)
    assert [d["failure"] for d in report["by_day"][-4:-1]] == [1, 1, 2]
    assert report["failures_by_type"] == [{"type": "deploy", "count": 4}]


def test_bad_output_path_is_one_line_error(history: Path, tmp_path: Path) -> None:
    env = clean_env(history)
    folder = tmp_path / "folder"
    folder.mkdir()
    assert_one_error_line(lore("report", "--html", str(folder), env=env), str(folder),
                          "is a directory")  # fmt: skip
    elsewhere = tmp_path / "elsewhere.html"
    elsewhere.write_text("kept")
    link = tmp_path / "link.html"
    link.symlink_to(elsewhere)
    assert_one_error_line(lore("report", "--html", str(link), env=env), "symlink")
    assert elsewhere.read_text() == "kept" and link.is_symlink()
    under_file = elsewhere / "report.html"
    assert_one_error_line(lore("report", "--html", str(under_file), env=env), str(under_file))


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        require_real("Debian's chromium is not installed (apt-get install chromium)")
    return found


def test_a_real_browser_renders_the_charts(history: Path, tmp_path: Path) -> None:
    browser = _chromium()
    _html(history)
    page = (history.parent / "report.html").as_uri()
    shot = tmp_path / "shot.png"
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]  # fmt: skip
    dom = subprocess.run([*base, "--dump-dom", page], capture_output=True, text=True,
                         timeout=120, check=True).stdout  # fmt: skip
    assert dom.count('<svg class="chart"') == 1
    assert dom.count('class="bar-failure"') >= 8 and dom.count('class="bar-total"') >= 8
    for label in DAYS:
        assert f">{label}</text>" in dom
    assert "<script>alert" not in dom  # the hostile text stayed text
    subprocess.run([*base, "--window-size=1200,900", f"--screenshot={shot}", page],
                   capture_output=True, timeout=120, check=True)  # fmt: skip
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG")
    assert len(set(png[200:])) > 64 and len(png) > 20_000  # a page drawn, not a blank one
