"""`benchmarks/replay_sessions.py` end to end on two real Claude Code sessions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import clean_env, real_sessions_root, require_real

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "replay_sessions.py"


def test_replay_two_real_sessions_json() -> None:
    if real_sessions_root() is None:  # beside every checkout and CI's clone: else a bad set-up
        require_real("../shared/data/claude-sessions is not beside the repository")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--sessions", "2", "--json"],
        cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["sessions"] == 2
    assert set(out["scores"]) == {"prompt", "files", "read", "command", "cap"}
    for value in out["scores"].values():
        assert set(value) == {"score", "of"}
    assert out["capture"]["replayed"] > 0
    assert out["capture"]["captured"] == out["capture"]["replayed"]
    assert {"PostToolUse", "SessionStart", "UserPromptSubmit"} <= set(out["latency_ms"])
    assert set(out["latency_ms"]["PostToolUse"]) == {"n", "p50", "p95"}
    assert set(out["redaction"]) == {"fields", "high_entropy_fields", "false_positives", "share"}
    assert out["secrets_on_disk"] == 0
    assert out["hook_errors"] == 0
    assert out["scores"]["cap"]["score"] == 1.0
    assert len(out["per_session"]) == 2
    assert "nproc" in out["machine"]


def test_real_sessions_brief_names_what_scrolled_out_of_the_last_actions() -> None:
    """Two real sessions whose edits and failing command lie beyond the brief's last 20
    actions: every one of the last 5 edited files, the files only read and the last failing
    command are named, within the cap."""
    if real_sessions_root() is None:
        require_real("../shared/data/claude-sessions is not beside the repository")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--ids", "f022dad1,3a782158", "--json"],
        cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["sessions"] == 2
    for key in ("files", "read", "command", "cap"):
        assert out["scores"][key]["score"] == 1.0, (key, out["per_session"])
    assert out["secrets_on_disk"] == 0
