"""Shared fixtures: real git repositories in temp dirs, the real `lore` command in subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lorebook import Lorebook

LORE = [sys.executable, "-m", "lorebook"]


def git(cwd: Path, *args: str) -> str:
    """Run git with a fixed identity; raise with stderr on failure."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid"}
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


def clean_env(root: Path | None = None, **extra: str) -> dict[str, str]:
    """The process environment without any LORE_* variable, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LORE_")}
    if root is not None:
        env["LORE_ROOT"] = str(root)
    env.update(extra)
    return env


def lore(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
         stdin: str | None = None, timeout: float = 60) -> Run:
    """Run the real `lore` command (python -m lorebook) in a subprocess."""
    done = subprocess.run([*LORE, *args], cwd=cwd, env=env or clean_env(), input=stdin,
                          capture_output=True, text=True, timeout=timeout)
    return Run(done.returncode, done.stdout, done.stderr)


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
    yield Lorebook.open(store, env={})
