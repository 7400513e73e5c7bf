"""`.pre-commit-hooks.yaml`: `lore check` as a pre-commit hook, run by the real
`pre-commit try-repo` in a temporary repository — a clean store passes, a secret committed into a
learning is refused (and the hook's output never repeats it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import clean_env, git, lore, require_real

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "ghp_" + "R8x2Lq9Zt4Wm7Kp3Vn6Yb1Hc5Jd0Fg2Ss4Ee"


def pre_commit() -> str:
    found = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which(
        "pre-commit"
    )
    if found is None:
        require_real("pre-commit is not installed (it is a development dependency)")
    return found


def try_repo(repo: Path) -> subprocess.CompletedProcess[str]:
    """`pre-commit try-repo <this project> lore-check --all-files`, this `lore` first on PATH."""
    env = clean_env(repo)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PRE_COMMIT_HOME"] = str(repo.parent / "pre-commit-home")
    return subprocess.run(
        [pre_commit(), "try-repo", str(ROOT), "lore-check", "--all-files"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_hook_file_declares_lore_check() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = hooks
    assert hook["id"] == "lore-check" and hook["entry"] == "lore check"
    assert hook["pass_filenames"] is False and hook["always_run"] is True


@pytest.mark.parametrize("secret", [False, True], ids=["clean", "secret"])
def test_try_repo_passes_a_clean_store_and_refuses_a_committed_secret(
    repo: Path, secret: bool
) -> None:
    assert lore("init", str(repo)).code == 0
    learning = repo / "learnings" / "2026-11-24-deploy-keys.md"
    body = f"Rotate the key; the old one was {TOKEN}." if secret else "Rotate the key yearly."
    learning.write_text(
        "---\nid: 2026-11-24-deploy-keys\ntitle: Deploy keys\nstatus: published\n"
        f"created: 2026-11-24\n---\n## Problem\n{body}\n\n## Key Takeaway\nRotate.\n",
        encoding="utf-8",
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "store")
    done = try_repo(repo)
    output = done.stdout + done.stderr
    assert TOKEN not in output
    if secret:
        assert done.returncode == 1, output
        assert "lore check" in output and "Failed" in output
        assert "learnings/2026-11-24-deploy-keys.md:8: possible secret" in output
    else:
        assert done.returncode == 0, output
        assert "Passed" in output
