"""Shared fixtures: real git repositories in temp dirs, the real `lore` command in subprocesses."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from lorebook import Lorebook
from lorebook.cli import main

pytest_plugins = ["search_fixtures"]  # model / Chroma server fixtures for the search tests

ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")

LORE = [sys.executable, "-m", "lorebook"]


def require_real(reason: str) -> NoReturn:
    """Skip a test whose real component is missing here -- but fail under CI
    (LORE_REQUIRE_REAL=1), where a skipped real-component test would hide a missing install."""
    if os.environ.get("LORE_REQUIRE_REAL") == "1":
        pytest.fail(f"a real component this test needs is missing: {reason}")
    pytest.skip(reason)


def real_sessions_root() -> Path | None:
    """The checkout beside which `../shared/data/claude-sessions` (the real Claude Code sessions
    the replay benchmark reads) lies: this repository, or the main checkout of a git worktree;
    None when it is in neither place."""
    repo = Path(__file__).resolve().parents[1]
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=repo, capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    for root in (repo, Path(common).parent if common else repo):
        if (root / "../shared/data/claude-sessions/index.json").is_file():
            return root
    return None


def git(cwd: Path, *args: str) -> str:
    """Run git with a fixed identity; raise with stderr on failure."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, env=env)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> object:
        return json.loads(self.out)


KEEP = {"LORE_MODEL_CACHE"}  # where the ONNX export lives: one per test session


def on_a_terminal(
    command: list[str],
    env: dict[str, str],
    *,
    stream: str = "stdout",
    timeout: float = 60,
    raw: bool = False,
) -> tuple[int, str, str]:
    """Run `command` with `stream` ("stdout" or "stderr") on a real pseudo-terminal and the other
    one piped: (exit code, stdout, stderr), the terminal's side with its CRLFs as LFs unless
    `raw` (what a person's terminal received)."""
    import pty

    leader, follower = pty.openpty()
    try:
        piped = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, stream: follower}
        done = subprocess.run(command, env=env, timeout=timeout, **piped)
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other side is closed: all read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    shown = b"".join(chunks).decode()
    shown = shown if raw else shown.replace("\r\n", "\n")
    if stream == "stdout":
        return done.returncode, shown, done.stderr.decode()
    return done.returncode, done.stdout.decode(), shown


def stop_server(proc: subprocess.Popen[Any], log: Any, timeout: float) -> None:
    """End a server a test started: SIGTERM, then SIGKILL after `timeout` s; close its log."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


def clean_env(root: Path | None = None, **extra: str) -> dict[str, str]:
    """The process environment without any LORE_* variable (but the per-user model cache of the
    test session), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LORE_") or k in KEEP}
    if root is not None:
        env["LORE_ROOT"] = str(root)
    env.update(extra)
    return env


def lore(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 60,
) -> Run:
    """Run the real `lore` command (python -m lorebook) in a subprocess."""
    done = subprocess.run(
        [*LORE, *args],
        cwd=cwd,
        env=env or clean_env(),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def cli_run(args: list[str], *, input: str | None = None, env: dict[str, str] | None = None) -> Run:
    """`lore ARGS` in this process (`lorebook.cli.main`: the table, the parser and the one-line
    errors of the real entry point), with its own stdin, stdout, stderr and LORE_* environment
    (the test process's are restored after)."""
    overrides: dict[str, str | None] = {
        k: None for k in os.environ if k.startswith("LORE_") and k not in KEEP
    }
    overrides.update(env or {})
    saved = dict(os.environ)
    streams = sys.stdin, sys.stdout, sys.stderr
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    try:
        for key, value in overrides.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        sys.stdin = io.TextIOWrapper(io.BytesIO((input or "").encode()), encoding="utf-8")
        sys.stdout, sys.stderr = out, err
        try:
            code = main(list(args))
        except SystemExit as exc:  # what the real process would exit with
            code = exc.code if isinstance(exc.code, int) else 1
        out.flush()
        err.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        os.environ.clear()
        os.environ.update(saved)
    return Run(
        code,
        out.buffer.getvalue().decode(),  # type: ignore[attr-defined]
        err.buffer.getvalue().decode(),
    )  # type: ignore[attr-defined]


def shard_files(root: Path) -> list[Path]:
    return sorted(p for p in (root / "actionlog").rglob("*.jsonl") if p.is_file())


def stored(root: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in shard_files(root)
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def stored_actions(root: Path) -> list[dict[str, Any]]:
    return [r for r in stored(root) if r["kind"] == "action"]


def assert_one_error_line(result: Run, *needles: str) -> str:
    assert result.code == 1, (result.out, result.err)
    assert result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("lore: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh git repository with one commit."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# sample\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def store(repo: Path) -> Path:
    """A git repository with an initialised lorebook store."""
    Lorebook.init(repo, env={})
    return repo


@pytest.fixture
def book(store: Path) -> Iterator[Lorebook]:
    opened = Lorebook.open(store, env={})
    opened.install_subscribers()  # as the CLI does: logging wakes the knowledge subscribers
    yield opened


@contextmanager
def read_only_mount(source: Path) -> Iterator[Path]:
    """`source` bind-mounted read-only (a real read-only file system; needs root)."""
    target = source.parent / f"{source.name}-ro"
    target.mkdir()
    bound = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True)
    if bound.returncode != 0:
        require_real(f"cannot bind-mount here: {bound.stderr.decode().strip()}")
    try:
        done = subprocess.run(["mount", "-o", "remount,ro,bind", str(target)], capture_output=True)
        if done.returncode != 0:
            require_real(f"cannot remount read-only here: {done.stderr.decode().strip()}")
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=True)


def wait_for(check: Any, seconds: float = 60) -> Any:
    """`check()` once it is truthy, else its last answer after `seconds`: a capture hook
    writes from a detached child that may outlive the agent's CLI."""
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.3)


def rls_lesson(book: Any) -> str:
    """Publish the lesson the real-agent tests ask about; its id is the marker looked for in
    the requests the scripted model receives."""
    found = book.learnings.new(
        title="Supabase RLS blocks INSERT with the anon key",
        category="database",
        tags=["rls", "supabase"],
        publish=True,
        body="## Problem\nInserts fail under RLS.\n\n## Key Takeaway\n"
        "Use the service role key for server-side inserts under RLS.\n",
    )
    return str(found.id)
