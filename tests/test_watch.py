"""`lore watch` as a real process: create, modify, delete, rename, editor saves (temp file +
rename), a burst of 1,000 files, files that vanish, and a clean stop on SIGTERM."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import LORE, clean_env, cli_run
from search_fixtures import learning_text, open_book, write_learning


class WatchProcess:
    def __init__(self, root: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [*LORE, "watch", *args],
            env=clean_env(root),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert self.proc.stdout is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()

    def _pump(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, wanted: str, timeout: float = 120) -> float:
        """Seconds until a line equal to (or starting with) `wanted` is printed."""
        started = time.monotonic()
        while True:
            left = timeout - (time.monotonic() - started)
            if left <= 0:
                raise AssertionError(f"no {wanted!r} within {timeout} s; seen {self.seen[-20:]}")
            try:
                line = self.lines.get(timeout=min(left, 1))
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise AssertionError(f"watch exited: {self.proc.stderr.read()}") from None  # type: ignore[union-attr]
                continue
            self.seen.append(line)
            if line == wanted or line.startswith(wanted):
                return time.monotonic() - started

    def stop(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, err


@pytest.fixture
def watcher(search_store: Path) -> WatchProcess:
    w = WatchProcess(search_store, "--debounce", "0.3")
    w.wait_for("Indexed learnings/rls-anon-insert.md")  # the catch-up pass
    w.wait_for("Watching learnings/, learnings/drafts/")
    yield w
    if w.proc.poll() is None:
        w.proc.kill()
        w.proc.wait()


def top(root: Path, query: str) -> str | None:
    hits = open_book(root).index.search(query, limit=1, refresh=False)
    return hits[0].id if hits else None


@pytest.mark.slow
def test_watch_create_modify_rename_delete(search_store: Path, watcher: WatchProcess) -> None:
    write_learning(
        search_store,
        "kafka-lag",
        title="Consumer lag grows when partitions rebalance",
        body="## Key Takeaway\nUse cooperative rebalancing.",
    )
    elapsed = watcher.wait_for("Indexed learnings/kafka-lag.md")
    assert elapsed < 30
    assert top(search_store, "kafka consumer lag rebalance") == "kafka-lag"

    path = search_store / "learnings" / "kafka-lag.md"
    path.write_text(path.read_text().replace("Consumer lag grows", "Consumer lag explodes"))
    watcher.wait_for("Indexed learnings/kafka-lag.md")
    hit = open_book(search_store).index.search("consumer lag explodes", limit=1, refresh=False)
    assert hit[0].title == "Consumer lag explodes when partitions rebalance"

    path.rename(search_store / "learnings" / "kafka-lag-2.md")
    watcher.wait_for("Indexed learnings/kafka-lag-2.md")
    watcher.wait_for("Removed learnings/kafka-lag.md")
    hits = open_book(search_store).index.search("consumer lag", limit=3, refresh=False)
    assert [h.path for h in hits if h.id == "kafka-lag"] == ["learnings/kafka-lag-2.md"]

    (search_store / "learnings" / "kafka-lag-2.md").unlink()
    watcher.wait_for("Removed learnings/kafka-lag-2.md")
    assert top(search_store, "kafka consumer lag rebalance") != "kafka-lag"

    # an editor's save: write a temp file, then rename it over the learning
    target = search_store / "learnings" / "pandas-memory.md"
    tmp = search_store / "learnings" / ".pandas-memory.md.swp"
    tmp.write_text(target.read_text().replace("Reading a large CSV", "Parsing a giant CSV"))
    os.replace(tmp, target)
    watcher.wait_for("Indexed learnings/pandas-memory.md")
    assert top(search_store, "parsing a giant CSV") == "pandas-memory"

    # a file that vanishes right after it was written, and a broken one
    ghost = search_store / "learnings" / "ghost.md"
    ghost.write_text(learning_text("ghost", {"title": "Here and gone"}))
    ghost.unlink()
    (search_store / "learnings" / "broken.md").write_text("---\ntitle: [oops\n---\n")
    write_learning(search_store, "after", title="Written after the ghost")
    watcher.wait_for("Indexed learnings/after.md")
    code, err = watcher.stop()
    assert code == 0, err
    assert "learnings/broken.md:" in err and "Traceback" not in err
    assert top(search_store, "here and gone") != "ghost"
    report = cli_run(["index", "--json"], env={"LORE_ROOT": str(search_store)}).json()
    assert isinstance(report, dict)
    assert (report["added"], report["updated"], report["removed"]) == (0, 0, 0)


@pytest.mark.slow
def test_watch_survives_a_burst_of_1000_files(search_store: Path, watcher: WatchProcess) -> None:
    folder = search_store / "learnings"
    started = time.monotonic()
    for i in range(1000):
        (folder / f"burst-{i:04d}.md").write_text(
            learning_text(f"burst-{i:04d}", {"title": f"Burst lesson number {i}"})
        )
    assert time.monotonic() - started < 5  # the burst really is about 1,000 files a second
    indexed = set()
    deadline = time.monotonic() + 600
    while len(indexed) < 1000:
        watcher.wait_for("Indexed learnings/burst-", timeout=deadline - time.monotonic())
        indexed.add(watcher.seen[-1])
    code, err = watcher.stop()
    assert code == 0, err
    report = cli_run(["index", "--json"], env={"LORE_ROOT": str(search_store)}).json()
    assert isinstance(report, dict) and report["added"] == 0 and report["unchanged"] == 1007
