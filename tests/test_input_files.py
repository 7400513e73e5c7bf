"""Input documents (`lore rca add`, `lore extract retro`, `lore learn new --body-file`,
`lore eval --queries`) are read
only from regular files of at most 1 MiB, with a bounded read: a device, a FIFO or a directory
is refused in one line naming the file, promptly, and nothing is written."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import LORE, clean_env

COMMANDS = {
    "rca": ["rca", "add"],
    "retro": ["extract", "retro"],
    "body": ["learn", "new", "--title", "T", "--body-file"],
    "eval": ["eval", "--queries"],
}


def run_promptly(store: Path, *args: str, stdin: bytes | None = None) -> tuple[int, str]:
    """The real `lore` in a subprocess that must finish within 30 s (a read of /dev/zero or
    of a FIFO without a writer never did)."""
    done = subprocess.run(
        [*LORE, *args],
        cwd=store,
        env=clean_env(store),
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
    )
    return done.returncode, done.stderr.decode()


def one_line(code: int, err: str, *needles: str) -> None:
    assert code == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lore: error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def learnings(store: Path) -> list[str]:
    return sorted(p.name for p in (store / "learnings").rglob("*.md"))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_device_is_refused_promptly(store: Path, command: str) -> None:
    one_line(*run_promptly(store, *COMMANDS[command], "/dev/zero"), "/dev/zero", "character device")
    assert learnings(store) == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_fifo_is_refused_without_waiting_for_a_writer(
    store: Path, tmp_path: Path, command: str
) -> None:
    fifo = tmp_path / "report.yaml"
    os.mkfifo(fifo)
    one_line(*run_promptly(store, *COMMANDS[command], str(fifo)), str(fifo), "FIFO")
    assert learnings(store) == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_directory_is_refused(store: Path, tmp_path: Path, command: str) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    one_line(*run_promptly(store, *COMMANDS[command], str(folder)), str(folder), "directory")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_file_over_the_cap_is_refused(store: Path, tmp_path: Path, command: str) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("title: x\nrootCause: y\ncorrectiveAction: z\n" + "#" * (1 << 20) + "\n")
    one_line(*run_promptly(store, *COMMANDS[command], str(big)), str(big), "1 MiB")
    assert learnings(store) == []


def test_endless_stdin_is_cut_at_the_cap(store: Path) -> None:
    one_line(*run_promptly(store, "rca", "add", "-", stdin=b"#" * (3 << 20)), "<stdin>", "1 MiB")


def test_a_regular_report_still_works(store: Path, tmp_path: Path) -> None:
    report = tmp_path / "rca.yaml"
    report.write_text("title: Port in use\nrootCause: old process\ncorrectiveAction: stop it\n")
    code, err = run_promptly(store, "rca", "add", str(report))
    assert code == 0, err
    assert len(learnings(store)) == 1
