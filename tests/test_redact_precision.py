"""Redaction precision on real Claude Code payloads: the id shapes Claude Code and the tools it
runs produce (tool-use, message and request ids, UUIDs, hashes inside paths) are kept, while
secrets that look like them are still redacted."""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import clean_env, lore, real_sessions_root, require_real, stored_actions
from lorebook.redact.sanitize import Sanitizer

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "replay_sessions.py"
SID = "45f30e78-e233-4c58-9ed6-332d549a3521"

# real values from ../shared/data/claude-sessions (MIT, Copyright (c) 2026 Entire Inc.)
KEPT = [
    "toolu_01Y2W8G7AnRZx2Q7vWrRL9vA",
    "srvtoolu_01W34QJ3ajDD6gwgXyWEU9xr",
    '"id":"msg_017VkSeQgdQ1zDEVkBfzqXNo","type":"message"',
    '"requestId":"req_011CWutznreXohiehUnsNAFL","type":"assistant"',
    '"environmentId": "env_01WuT8wLn4R6oPRMnGBsWbMg"',
    "cd /var/folders/gz/h7sjhvz13cb0gcrzzcncqtyw0000gn/T/tmp.gBAZw4iBi && go test ./...",
    "/Users/dev/.gemini/tmp/02b4f8db16146682e4e864be66e35fb7abb68530291a61572ebeb51a140d29ad"
    "/chats/session-2026-02-15T09-46-12.json",
    "node_modules/.cache/babel-loader/Xy9/" + "3f" * 20 + "/index.js",
    '{"sessionId":"' + SID + '","version":"2.1.42"}',
    '"session_id":"2026-01-20-3646471d-48ad-4c0a-9c94-2159b3868a50","component":"hooks"',
    "cat /tmp/lore-replay-gpc2172i/CLAUDE.md",
    "/Users/Alex/Library/Caches/go-build/3f/3fA9bc/TmpXyz-d",
    "/home/dev/data/sessions/ab/cdef0123456789abcdef0123456789abcdef01/0/full.jsonl",
    # Go source a tool read: a session id named in code, not a web session's secret
    "\t\tSessionID:      state.SessionID,\n\t\tBaseCommit: head,",
    "\tsessionID := filepath.Base(ctx.MetadataDir)\n",
    '\t\t"session_id":      session.ID,\n',
    "\t\tSessionID: entireSessionID,\n",
]
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def rnd(n: int, alphabet: str = string.ascii_letters + string.digits, seed: int = 0) -> str:
    r = random.Random(f"{n}-{seed}-{alphabet}")
    while True:
        out = "".join(r.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in out) and any(c.isupper() for c in out):
            return out


@pytest.mark.parametrize("text", KEPT)
def test_real_id_shapes_and_hashes_in_paths_are_kept(text: str) -> None:
    assert Sanitizer().sanitize({"field": text}) == ({"field": text}, 0)
    assert Sanitizer().redact_text(text) == (text, 0)


SECRETS = [
    # a random token after an id-like prefix, but not an id's shape
    "toolu_01" + rnd(40, seed=1),
    "toolu_" + rnd(24, seed=2),
    "msg_01" + rnd(21, BASE58, 3) + "0l",  # "0" and "l" are no base58 characters
    "toolu_01" + rnd(22, BASE58, 4) + rnd(10, seed=5),
    # random segments inside something path-shaped, and a base64 key with slashes
    "config/" + rnd(32, seed=6) + "/token",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    rnd(18, seed=7) + "/" + rnd(18, seed=8) + "/" + rnd(18, seed=9),
    "/tmp/" + rnd(30, seed=12) + "/CLAUDE",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_secrets_shaped_like_ids_or_paths_are_still_redacted(secret: str) -> None:
    out, count = Sanitizer().sanitize({"field": f"value {secret} end"})
    assert count >= 1 and "[REDACTED:high_entropy]" in out["field"], out
    # every random run of the secret is gone
    assert not any(len(part) >= 16 and part in out["field"] for part in secret.split("/"))


@pytest.mark.parametrize("value", [KEPT[0], SID, "toolu_01" + rnd(22, BASE58, 10)])
def test_an_id_shaped_value_under_a_secret_name_is_redacted(value: str) -> None:
    sanitizer = Sanitizer()
    for key in ("api_key", "apiKey", "token", "client_secret", "password", "authorization"):
        assert sanitizer.sanitize({key: value})[0] == {key: "[REDACTED]"}
        text, count = sanitizer.redact_text(f'{{"{key}": "{value}"}} and {key.upper()}={value}')
        assert value not in text and count == 2, text


@pytest.mark.parametrize(
    "text",
    [
        "sessionid=" + rnd(24, seed=13),
        "sessionId: aBc12dEf.GhI34jK",  # a signed web session id
        'session_id = "s%3A' + rnd(20, seed=14) + '"',
        "Cookie: sessionid=" + rnd(32, seed=15),
    ],
)
def test_web_session_ids_are_still_redacted(text: str) -> None:
    out, count = Sanitizer().redact_text(text)
    assert count == 1 and "[REDACTED" in out, out


def test_the_post_tool_use_hook_keeps_the_tool_use_id(store: Path) -> None:
    tool_use_id = KEPT[0]
    secret = "ghp_" + rnd(36, seed=11)
    stdin = json.dumps({
        "session_id": SID, "transcript_path": str(store / "t.jsonl"), "cwd": str(store),
        "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cat /var/folders/gz/h7sjhvz13cb0gcrzzcncqtyw0000gn/T/x.log"},
        "tool_response": {"stdout": f"TOKEN={secret}\n", "stderr": "", "interrupted": False},
        "tool_use_id": tool_use_id,
    })  # fmt: skip
    done = lore("hook", "post-tool-use", cwd=store, env=clean_env(LORE_HOOK_DETACH="0"),
                stdin=stdin)  # fmt: skip
    assert done.code == 0, done.err
    (action,) = stored_actions(store)
    ctx = action["context"]
    assert ctx["tool_use_id"] == tool_use_id
    assert "h7sjhvz13cb0gcrzzcncqtyw0000gn/T/x.log" in json.dumps(ctx)
    assert secret not in json.dumps(action) and "[REDACTED" in json.dumps(ctx["response"])


def test_replayed_real_sessions_have_at_most_one_percent_false_positives() -> None:
    """Three real sessions through the hooks: ≤ 1 % of stored fields wrongly redacted."""
    if real_sessions_root() is None:
        require_real("../shared/data/claude-sessions is not beside the repository")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--sessions", "3", "--json"],
        cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    red = out["redaction"]
    assert red["fields"] > 500 and out["secrets_on_disk"] == 0
    assert red["share"] <= 0.01, red
