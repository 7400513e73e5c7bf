"""The committed launcher `.lore/bin/lore` that project hooks run: it reaches this machine's
lore with no virtual environment active, and says once, without blocking, when it cannot."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import clean_env, lore, stored_actions
from lorebook.hooks.launcher import FIX, LAUNCHER, RECORD
from lorebook.hooks.wirekit import project_script
from test_hooks import bash_payload

LAUNCHED = shlex.join(["sh", "-c", project_script("CLAUDE_PROJECT_DIR"), "lore"])


def install(repo: Path, *extra: str) -> Any:
    done = lore("hooks", "install", "claude", *extra, cwd=repo,
                env=clean_env(HOME=str(repo.parent / "home")))  # fmt: skip
    assert done.code == 0, done.err
    return done


def post_tool_use_command(repo: Path) -> str:
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    command: str = settings["hooks"]["PostToolUse"][-1]["hooks"][0]["command"]
    return command


def no_venv(path: str, **extra: str) -> dict[str, str]:
    """As Claude Code started from a shell without the virtual environment: no VIRTUAL_ENV,
    no PYTHONPATH, a PATH of our choosing."""
    env = {k: v for k, v in clean_env(**extra).items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}  # fmt: skip
    env["PATH"] = path
    return env


def run_as_claude(repo: Path, command: str, stdin: str, env: dict[str, str]) -> Any:
    """The settings' command as Claude Code runs it: a shell, CLAUDE_PROJECT_DIR set."""
    return subprocess.run(["/bin/sh", "-c", command], cwd=repo, input=stdin, text=True,
                          capture_output=True, env={**env, "CLAUDE_PROJECT_DIR": str(repo)},
                          timeout=60)  # fmt: skip


def test_project_hooks_run_the_launcher_and_it_reaches_the_recorded_lore(
    repo: Path, tmp_path: Path
) -> None:
    install(repo)
    command = post_tool_use_command(repo)
    assert command == f"{LAUNCHED} hook post-tool-use"
    assert (repo / LAUNCHER).is_file() and (repo / RECORD).is_file()
    assert "cache/" in (repo / ".lore" / ".gitignore").read_text()  # the record stays local
    empty = tmp_path / "bin"  # only `sh`: no lore, no python3; only the record can be reached
    empty.mkdir()
    (empty / "sh").symlink_to("/bin/sh")
    # the recorded interpreter imports this checkout's sources through PYTHONPATH, as tests do
    env = no_venv(str(empty), LORE_HOOK_DETACH="0",
                  PYTHONPATH=os.environ.get("PYTHONPATH", ""))  # fmt: skip
    done = run_as_claude(repo, command, bash_payload(repo, "hello"), env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    [action] = stored_actions(repo)
    assert action["type"] == "tool_call" and action["context"]["command"] == "cat .env"


def test_with_nothing_to_run_it_says_so_once_and_never_blocks(repo: Path) -> None:
    install(repo)
    (repo / RECORD).unlink()  # a teammate's fresh clone: nothing recorded on this machine
    (repo / ".lore" / "cache" / "hooks.log").unlink(missing_ok=True)
    command = post_tool_use_command(repo)
    env = no_venv("/usr/bin:/bin")  # python3 there cannot import lorebook
    first = run_as_claude(repo, command, bash_payload(repo, "x" * 200_000), env)
    assert first.returncode == 0
    assert first.stderr.splitlines() == [FIX]
    assert "lore hooks install CLIENT" in FIX and "virtual environment" in FIX
    assert not set("'\"\\") & set(FIX)  # the script quotes it in '…' and in JSON as is
    assert "lorebook: cannot run lore" in json.loads(first.stdout)["systemMessage"]
    assert FIX in (repo / ".lore" / "cache" / "hooks.log").read_text()
    second = run_as_claude(repo, command, bash_payload(repo, "y"), env)
    assert (second.returncode, second.stdout, second.stderr) == (0, "", "")
    assert stored_actions(repo) == []
    install(repo)  # recording again makes it speak again after a later failure
    assert not (repo / ".lore" / "cache" / "launcher-warned").exists()


def test_status_says_what_the_launcher_runs(repo: Path) -> None:
    install(repo)
    done = lore("hooks", "status", "--json", cwd=repo, env=clean_env(PATH="/usr/bin:/bin"))
    found = json.loads(done.out)["launcher"]
    assert found["present"] is True and found["via"] == "recorded", found
    assert "lorebook" in found["runs"]
    text = lore("hooks", "status", cwd=repo, env=clean_env(PATH="/usr/bin:/bin")).out
    assert "launcher" in text and "recorded" in text


def test_install_is_idempotent_and_uninstall_removes_the_launcher(repo: Path) -> None:
    install(repo)
    before = (repo / LAUNCHER).read_bytes()
    again = install(repo)
    assert "wrote" not in again.out and (repo / LAUNCHER).read_bytes() == before
    dry = lore("hooks", "uninstall", "claude", "--dry-run", cwd=repo, env=clean_env())
    assert "would remove" in dry.out and (repo / LAUNCHER).exists()
    done = lore("hooks", "uninstall", "claude", cwd=repo, env=clean_env())
    assert done.code == 0, done.err
    assert not (repo / LAUNCHER).exists() and not (repo / LAUNCHER).parent.exists()
    assert not (repo / RECORD).exists()


def test_dry_run_shows_the_launcher_and_writes_nothing(repo: Path) -> None:
    done = lore("hooks", "install", "claude", "--dry-run", cwd=repo, env=clean_env())
    assert done.code == 0, done.err
    assert "+++ " + str(repo / LAUNCHER) in done.out and "would record" in done.out
    assert not (repo / ".lore").exists()


def test_an_explicit_command_is_recorded_for_the_launcher_and_user_scope_needs_none(
    repo: Path,
) -> None:
    """A committed config never holds one machine's path: `--command` is what the launcher
    runs here; a user's own config gets it as is."""
    install(repo, "--command", "/opt/lore/bin/lore")
    assert post_tool_use_command(repo) == f"{LAUNCHED} hook post-tool-use"
    assert (repo / RECORD).read_text() == "/opt/lore/bin/lore\n"
    home = repo.parent / "home"
    install(repo, "--scope", "user", "--command", "/opt/lore/bin/lore")
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PostToolUse"][-1]["hooks"][0]["command"]
    assert command == "/opt/lore/bin/lore hook post-tool-use"


def test_the_launcher_is_never_written_through_a_symlink(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".lore").mkdir()
    (repo / ".lore" / "bin").symlink_to(outside)
    done = lore("hooks", "install", "claude", cwd=repo, env=clean_env())
    assert done.code == 1 and "symlink" in done.err and "Traceback" not in done.err
    assert list(outside.iterdir()) == [] and not (repo / ".claude").exists()


def test_hooks_installed_from_an_active_venv_still_capture_without_it(
    repo: Path, tmp_path: Path
) -> None:
    """The defect: installed by a `lore` that PATH found (an active venv), the settings held a
    bare `lore`; Claude Code started without the venv then lost every capture."""
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    script = venv_bin / "lore"  # a console script as pip writes it
    script.write_text(
        f"#!{sys.executable}\nimport sys\nfrom lorebook.launch import console\n"
        "if __name__ == '__main__':\n    sys.exit(console())\n"
    )
    script.chmod(0o755)
    pythonpath = os.environ.get("PYTHONPATH", "")
    active = clean_env(HOME=str(tmp_path / "home"), PYTHONPATH=pythonpath)
    active["PATH"] = f"{venv_bin}:{active['PATH']}"
    done = subprocess.run(
        [str(script), "hooks", "install", "claude"],
        cwd=repo, env=active, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    sh_only = tmp_path / "bin"
    sh_only.mkdir()
    (sh_only / "sh").symlink_to("/bin/sh")
    env = no_venv(f"{sh_only}:/usr/bin:/bin", LORE_HOOK_DETACH="0", PYTHONPATH=pythonpath)
    ran = run_as_claude(repo, post_tool_use_command(repo), bash_payload(repo, "hi"), env)
    assert (ran.returncode, ran.stderr) == (0, ""), ran.stderr
    [action] = stored_actions(repo)
    assert action["context"]["command"] == "cat .env"
