"""Reliability under real conditions: many processes and threads appending at once, a writer
killed with SIGKILL mid-stream, and two clones logging into the same shards and merging through
git in both directions. Real processes, real files, real git; nothing is mocked.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, lore
from lorebook import Lorebook
from lorebook.log.reader import iter_records
from lorebook.log.writer import action_record, encode
from lorebook.problems import Problem

pytestmark = pytest.mark.slow

PAD = "x" * 200


# -- helpers -----------------------------------------------------------------------------------


def shards(root: Path) -> list[Path]:
    return sorted(p for p in (root / "actionlog").rglob("*.jsonl") if p.is_file())


def raw_lines(path: Path) -> list[dict[str, object]]:
    """Every line of a shard, parsed; fails on a blank, partial or unterminated line."""
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path}: last line is not newline-terminated"
    out = []
    for number, raw in enumerate(data.split(b"\n")[:-1], 1):
        assert raw.strip(), f"{path}:{number}: blank line"
        value = json.loads(raw)
        assert isinstance(value, dict), f"{path}:{number}: not an object"
        out.append(value)
    return out


def read_everything(root: Path) -> tuple[list[dict[str, object]], list[Problem]]:
    problems: list[Problem] = []
    records = list(iter_records(root / "actionlog", base=root, on_problem=problems.append))
    return records, problems


def assert_complete_log(root: Path, workers: int, per_worker: int, sessions: set[str]) -> None:
    """Every line parses; the reader returns every action once; each worker's 0..n-1 are there,
    and in each shard a worker's lines appear in the order it appended them."""
    total = workers * per_worker
    files = shards(root)
    assert {p.stem for p in files} == sessions
    lines = 0
    for path in files:
        last_seen: dict[int, int] = {}
        for value in raw_lines(path):
            lines += 1
            context = value["context"]
            assert isinstance(context, dict)
            assert context["pad"] == PAD
            worker, i = context["w"], context["i"]
            assert i > last_seen.get(worker, -1), f"{path}: worker {worker} out of order at {i}"
            last_seen[worker] = i
    assert lines == total

    records, problems = read_everything(root)
    assert problems == []
    assert len(records) == total
    assert len({r["id"] for r in records}) == total
    seqs: dict[object, list[object]] = defaultdict(list)
    for r in records:
        assert r["kind"] == "action" and r["type"] == "tool_call"
        seqs[r["context"]["w"]].append(r["context"]["i"])  # type: ignore[index]
    assert sorted(seqs) == list(range(workers))
    for worker, seq in seqs.items():
        assert sorted(seq) == list(range(per_worker)), f"worker {worker}"

    book = Lorebook.open(root, env={})
    actions = book.actions(limit=None)
    assert len(actions) == total
    assert len({a["id"] for a in actions}) == total


def _append_worker(root: str, worker: int, count: int, session: str | None, barrier: Any) -> None:
    """Child process body: open the store itself, wait for the others, append `count` lines."""
    book = Lorebook.open(root, env={})
    barrier.wait(60)  # a worker that died before this breaks the barrier instead of hanging
    for i in range(count):
        book.log("tool_call", session=session, context={"i": i, "w": worker, "pad": PAD})


def run_processes(
    root: Path, workers: int, count: int, session_of: Callable[[int], str | None]
) -> float:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(workers)
    procs = [
        ctx.Process(target=_append_worker, args=(str(root), w, count, session_of(w), barrier))
        for w in range(workers)
    ]
    started = time.monotonic()
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    elapsed = time.monotonic() - started
    for p in procs:
        if p.is_alive():
            p.kill()
    assert [p.exitcode for p in procs] == [0] * workers
    return elapsed


# -- 1. concurrency ----------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["same-session", "session-per-worker"])
def test_eight_processes_append_2000_lines_each(store: Path, layout: str) -> None:
    if layout == "same-session":

        def session_of(w: int) -> str:
            return "shared-session"

        sessions = {"shared-session"}
    else:

        def session_of(w: int) -> str:
            return f"worker-{w}"

        sessions = {f"worker-{w}" for w in range(8)}
    elapsed = run_processes(store, 8, 2000, session_of)
    assert elapsed < 60
    assert_complete_log(store, 8, 2000, sessions)


@pytest.mark.parametrize("layout", ["same-session", "session-per-worker"])
def test_eight_threads_share_one_lorebook(store: Path, layout: str) -> None:
    book = Lorebook.open(store, env={})
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def body(worker: int) -> None:
        session = "shared-session" if layout == "same-session" else f"worker-{worker}"
        try:
            barrier.wait()
            for i in range(500):
                book.log("tool_call", session=session, context={"i": i, "w": worker, "pad": PAD})
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    sessions = {"shared-session"} if layout == "same-session" else {f"worker-{w}" for w in range(8)}
    assert_complete_log(store, 8, 500, sessions)


def test_automatic_session_gets_exactly_one_start_event(store: Path) -> None:
    """Processes racing on a new automatic shard: the header is written once, as line 1."""
    run_processes(store, 8, 200, lambda w: None)
    files = shards(store)
    assert files and all(p.stem.startswith("auto-") for p in files)
    actions = 0
    for path in files:  # one shard, or two if the run crossed midnight UTC
        values = raw_lines(path)
        starts = [n for n, v in enumerate(values) if v["kind"] == "session"]
        assert starts == [0], f"{path}: start events at lines {[n + 1 for n in starts]}"
        assert values[0]["event"] == "start"
        actions += len(values) - 1
    assert actions == 1600
    records, problems = read_everything(store)
    assert problems == []
    assert len({r["id"] for r in records}) == len(records) == 1600 + len(files)


# -- 2. SIGKILL mid-stream ---------------------------------------------------------------------

MOMENT = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)

KILLED_WRITER = """
import sys
from datetime import datetime
from lorebook import Lorebook

book = Lorebook.open(sys.argv[1], env={})
moment = datetime.fromisoformat(sys.argv[2])
context = {f"k{j:02d}": "y" * 900 for j in range(22)}  # ~20 KB per line
i = 0
while True:
    context["i"] = i
    book.log("tool_call", session="doomed", context=context, now=moment)
    i += 1
"""


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_sigkill_mid_stream_then_torn_tail(store: Path) -> None:
    shard = store / "actionlog" / "2026" / "11" / "22" / "doomed.jsonl"
    rel = "actionlog/2026/11/22/doomed.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(store), MOMENT.isoformat()],
        env=clean_env(),
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(
            lambda: shard.exists() and shard.stat().st_size > 40 * 20_000,
            30,
            "the writer to append 40 lines",
        )
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    data = shard.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    killed_tail = data[len(complete) :]  # non-empty only if the kill tore the last write
    count = complete.count(b"\n")
    assert count >= 40
    for number, raw in enumerate(complete.split(b"\n")[:-1], 1):
        value = json.loads(raw)
        assert isinstance(value["context"], dict), value["context"]
        assert value["context"]["i"] == number - 1
        assert len(raw) > 19_000

    # a crash mid-write: half a line, no newline
    half = encode(
        action_record(
            "tool_call",
            session="doomed",
            agent="a",
            project="p",
            context={"half": True},
            now=MOMENT,
        )
    )
    fragment = half[: len(half) // 2]
    with open(shard, "ab") as handle:
        handle.write(fragment)
    torn = killed_tail + fragment

    book = Lorebook.open(store, env={})
    problems: list[Problem] = []
    actions = book.actions(limit=None, on_problem=problems.append)
    assert len(problems) == 1
    assert (problems[0].path, problems[0].line) == (rel, count + 1)
    assert "torn" in problems[0].reason
    assert str(problems[0]).startswith(f"{rel}:{count + 1}: torn line at end of file")
    assert len(actions) == count
    assert len({a["id"] for a in actions}) == count
    assert sorted(a["context"]["i"] for a in actions) == list(range(count))

    new = book.log("tool_call", session="doomed", context={"after": "crash"}, now=MOMENT)
    data = shard.read_bytes()
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    assert len(lines) == count + 2
    assert lines[count] == torn  # the fragment alone on its own line
    assert json.loads(lines[-1])["id"] == new["id"]
    assert json.loads(lines[-1])["context"] == {"after": "crash"}

    problems.clear()
    after = book.actions(limit=None, on_problem=problems.append)
    assert len(after) == count + 1
    assert new["id"] in {a["id"] for a in after}
    assert len(problems) == 1
    assert (problems[0].path, problems[0].line) == (rel, count + 1)
    assert problems[0].reason.startswith("invalid JSON: ")  # terminated now: no longer "torn"

    check = lore("check", env=clean_env(store))
    assert check.code == 1
    assert check.out.splitlines()[0].startswith(f"{rel}:{count + 1}: invalid JSON")
    assert check.out.splitlines()[-1] == (
        f"checked {count + 1} records in 1 shards, 0 learnings, 0 expertise files: 1 finding(s)"
    )


# -- 3. two clones, git pull both ways ---------------------------------------------------------

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_MERGE_AUTOEDIT": "no",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(cwd), "-c", "pull.rebase=false", "-c", "init.defaultBranch=main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    assert done.returncode == 0, f"git {' '.join(args)} (exit {done.returncode}): {done.stderr}"
    return done.stdout


CLONE_WRITER = """
import json, sys
from datetime import datetime, timedelta
from lorebook import Lorebook

root, agent, shared, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
moment = datetime.fromisoformat(sys.argv[5])
book = Lorebook.open(root, env={"LORE_AGENT": agent})
ids = []
for i in range(count):
    at = moment + timedelta(milliseconds=i)
    ids.append(book.log("tool_call", session=shared, context={"i": i, "by": agent}, now=at)["id"])
    ids.append(book.log("commit", context={"i": i, "by": agent}, now=at)["id"])  # automatic
print(json.dumps(ids))
"""


def two_clones(tmp_path: Path) -> tuple[Path, Path]:
    origin, a, b = tmp_path / "origin.git", tmp_path / "a", tmp_path / "b"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp_path, "clone", "-q", str(origin), str(a))
    git(a, "symbolic-ref", "HEAD", "refs/heads/main")
    (a / "README.md").write_text("# shared\n")
    init = lore("init", cwd=a, env=clean_env(a))
    assert init.code == 0, init.err
    assert "actionlog/**/*.jsonl merge=union" in (a / ".gitattributes").read_text().splitlines()
    git(a, "add", "-A")
    git(a, "commit", "-q", "-m", "lore init")
    git(a, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(origin), str(b))
    attr = git(b, "check-attr", "merge", "--", "actionlog/2026/11/22/x.jsonl")
    assert attr.strip() == "actionlog/2026/11/22/x.jsonl: merge: union"
    return a, b


def sync(a: Path, b: Path, message_a: str, message_b: str) -> None:
    """Commit both; A pushes; B pulls (merge) and pushes; A pulls."""
    for clone, message in ((a, message_a), (b, message_b)):
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "-m", message)
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", "--no-rebase", "origin", "main")
    git(b, "push", "-q", "origin", "main")
    git(a, "pull", "-q", "--no-rebase", "origin", "main")


def assert_same_clean_shards(a: Path, b: Path) -> dict[str, bytes]:
    assert git(a, "rev-parse", "HEAD") == git(b, "rev-parse", "HEAD")
    for clone in (a, b):
        assert git(clone, "ls-files", "-u") == ""  # nothing unmerged
        assert git(clone, "status", "--porcelain") == ""
    contents = {}
    for path in shards(a):
        rel = str(path.relative_to(a))
        data = path.read_bytes()
        for marker in (b"<<<<<<<", b"=======", b">>>>>>>"):
            assert marker not in data, f"{rel}: conflict marker {marker!r}"
        assert (b / rel).read_bytes() == data, f"{rel} differs between the clones"
        contents[rel] = data
    assert sorted(contents) == sorted(str(p.relative_to(b)) for p in shards(b))
    return contents


def test_two_clones_log_and_merge_both_ways(tmp_path: Path) -> None:
    a, b = two_clones(tmp_path)
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                CLONE_WRITER,
                str(clone),
                agent,
                "pairing",
                "200",
                MOMENT.isoformat(),
            ],
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for clone, agent in ((a, "alice"), (b, "bob"))
    ]
    written: list[str] = []
    for proc in writers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        written.extend(json.loads(out))
    assert len(written) == len(set(written)) == 800

    sync(a, b, "alice's work", "bob's work")
    contents = assert_same_clean_shards(a, b)
    day = "actionlog/2026/11/22"
    shared = f"{day}/pairing.jsonl"
    assert shared in contents and len(contents) == 3  # pairing + one automatic shard each
    lines = contents[shared].split(b"\n")
    assert lines[-1] == b"" and len(lines) - 1 == 400  # every line of both sides, once
    for clone in (a, b):
        for path in shards(clone):
            raw_lines(path)  # every line parses

    for clone in (a, b):
        records, problems = read_everything(clone)
        assert problems == []
        actions = [r for r in records if r["kind"] == "action"]
        assert len(actions) == 800
        assert sorted(r["id"] for r in actions) == sorted(written)
        starts = [r for r in records if r["kind"] == "session"]
        assert sorted(r["agent"] for r in starts) == ["alice", "bob"]  # one auto header each
        assert len(Lorebook.open(clone, env={}).actions(limit=None)) == 800
        check = lore("check", env=clean_env(clone))
        assert check.code == 0, check.out + check.err
        assert check.out.strip() == (
            "checked 802 records in 3 shards, 0 learnings, 0 expertise files: ok"
        )


@pytest.mark.parametrize("placement", ["only-change", "interleaved"])
def test_identical_line_in_both_clones(tmp_path: Path, placement: str) -> None:
    """Both clones append the same line. As the only change git sees the same edit on both sides
    and keeps one copy; mixed with other lines the union keeps both copies and the reader (not
    git) removes the duplicate, which `lore check` reports."""
    a, b = two_clones(tmp_path)
    book_a = Lorebook.open(a, env={"LORE_AGENT": "alice"})
    book_b = Lorebook.open(b, env={"LORE_AGENT": "bob"})
    base = [book_a.log("plan", session="pairing", now=MOMENT)["id"]]
    git(a, "add", "-A")
    git(a, "commit", "-q", "-m", "base")
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", "--no-rebase", "origin", "main")

    same = action_record(
        "commit",
        session="pairing",
        agent="carol",
        project="shared",
        context={"copied": True},
        now=MOMENT,
    )
    line = encode(same)
    shard_rel = "actionlog/2026/11/22/pairing.jsonl"
    extra: list[str] = []

    def copy_line(clone: Path) -> None:
        with open(clone / shard_rel, "ab") as handle:
            handle.write(line)

    if placement == "only-change":
        copy_line(a)
        copy_line(b)
    else:
        copy_line(a)  # A: [same, x]
        extra.append(book_a.log("commit", session="pairing", now=MOMENT)["id"])
        extra.append(book_b.log("commit", session="pairing", now=MOMENT)["id"])
        copy_line(b)  # B: [y, same]

    sync(a, b, "alice", "bob")
    contents = assert_same_clean_shards(a, b)
    data = contents[shard_rel]
    copies = data.split(b"\n").count(line.rstrip(b"\n"))
    assert copies == (1 if placement == "only-change" else 2)
    assert len(data.split(b"\n")) - 1 == 1 + len(extra) + copies

    records, problems = read_everything(a)
    assert problems == []
    got = [r["id"] for r in records]
    assert sorted(got) == sorted([*base, *extra, same["id"]])  # the copied line exactly once
    assert len(Lorebook.open(a, env={}).actions(limit=None)) == len(got)

    check = lore("check", env=clean_env(a))
    assert check.code == 0, check.out  # an exact repeat is not damage
    if copies == 2:
        assert check.out.splitlines()[-1] == (
            f"checked {len(got) + 1} records in 1 shards, 0 learnings, 0 expertise files: ok"
        )
        assert check.out.startswith("info: 1 repeated line(s)")
        fixed = lore("check", "--fix", env=clean_env(a))
        assert fixed.code == 0, fixed.out
        assert (a / shard_rel).read_bytes().split(b"\n").count(line.rstrip(b"\n")) == 1
