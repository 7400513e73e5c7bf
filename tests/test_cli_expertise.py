"""`lore expertise …`: every subcommand with good and bad input, in-process and as `lore`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, git, lore
from lorebook import Lorebook
from lorebook.render.framing import NOTICE

SECURITY = """\
# read before touching auth
domain: security
overview: JWT access tokens (RS256, 15 min)
core_files:
  - src/auth/jwt.py
patterns:
  - name: token-family
    description: Refresh tokens carry a family id
best_practices:
  - Never log tokens
learned_from_failures:
  - issue: refresh token accepted twice
    error: "validation: refresh token reuse not detected"
    solution: revoke the token family on reuse
    sessions: [s-0]
    timestamp: "2026-11-20T10:00:00Z"
effective_patterns:
  - Read -> Edit -> test for auth changes
successful_techniques: []
last_validated: "2026-11-20"
"""


@pytest.fixture
def proj(store: Path) -> Path:
    git(store, "config", "user.name", "Test")
    git(store, "config", "user.email", "test@example.invalid")
    (store / "src" / "auth").mkdir(parents=True)
    (store / "src" / "auth" / "jwt.py").write_text("ALG = 'RS256'\n")
    (store / ".expertise" / "security.yaml").write_text(SECURITY)
    git(store, "add", "src", ".expertise/security.yaml")
    git(store, "commit", "-q", "-m", "auth")
    book = Lorebook.open(store, env={})
    with book.session(session_id="s-1") as s:
        s.log("plan", context={"task": "rotate JWT refresh tokens"})
        s.log("tool_call", context={"tool": "Read", "file_path": "src/auth/jwt.py"})
        s.log("tool_call", context={"tool": "Edit", "file_path": "src/auth/jwt.py"})
        s.log("tool_call", context={"tool": "Bash", "command": "pytest -q"})
    return store


def cli(root: Path, *args: str):  # type: ignore[no-untyped-def]
    return cli_run(["--root", str(root), "expertise", *args])


def test_list(proj: Path) -> None:
    run = cli(proj, "list", "--json")
    assert run.code == 0, run.err
    rows = {r["domain"]: r for r in run.json()}  # type: ignore[union-attr]
    assert rows["security"]["exists"] is True
    assert rows["security"]["entries"]["core_files"] == 1
    assert rows["database"]["exists"] is False
    human = cli(proj, "list")
    assert "security" in human.out and "(no file yet)" in human.out


def test_show(proj: Path) -> None:
    run = cli(proj, "show", "security")
    assert run.code == 0
    assert run.out == SECURITY  # the file as written, comments included
    data = cli(proj, "show", "security", "--json").json()
    assert data["patterns"][0] == {
        "name": "token-family",  # type: ignore[index]
        "description": "Refresh tokens carry a family id",
    }


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["show", "../../etc/passwd"], "is not a domain name"),
        (["show", "Security"], "is not a domain name"),
        (["show", "mobile"], "unknown domain 'mobile'"),
        (["show", "api"], ".expertise/api.yaml does not exist yet"),
        (["history", "a/b"], "is not a domain name"),
        (["improve", "x.yaml"], "is not a domain name"),
        (["validate"], "give a DOMAIN or --all"),
        (["validate", "security", "--all"], "give a DOMAIN or --all"),
        (["learn"], "the following arguments are required: --session"),
        (["learn", "--session", "nope"], "session 'nope' has no actions"),
        (["learn", "--session", "s/1"], "session id 's/1' must be"),
        (["learn", "--session", "s-1", "--domain", "nowhere"], "unknown domain 'nowhere'"),
        (["prompt"], "give a domain or a task"),
        (["prompt", "security", "--task", "x"], "give a domain or a task"),
        (["classify"], "the following arguments are required: TEXT"),
    ],
)
def test_bad_input_is_one_error_line(proj: Path, args: list[str], needle: str) -> None:
    assert_one_error_line(cli(proj, *args), needle)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("domain: security\ncore_files: [a\n", ".expertise/security.yaml:3: invalid YAML"),
        ("- a\n- b\n", ".expertise/security.yaml:1: an expertise file is a mapping"),
    ],
)
def test_broken_file_is_reported_and_left_alone(proj: Path, text: str, needle: str) -> None:
    path = proj / ".expertise" / "security.yaml"
    path.write_text(text)
    for args in (
        ["show", "security"],
        ["validate", "security"],
        ["improve", "security"],
        ["learn", "--session", "s-1", "--domain", "security"],
        ["list"],
    ):
        assert_one_error_line(cli(proj, *args), needle)
        assert path.read_text() == text


def test_json_errors(proj: Path) -> None:
    run = cli(proj, "show", "nope/x", "--json")
    assert run.code == 1
    assert "is not a domain name" in json.loads(run.err)["error"]


def test_classify(proj: Path) -> None:
    run = cli(proj, "classify", "add an index to the orders table", "--json")
    assert run.json() == {  # type: ignore[comparison-overlap]
        "domain": "database",
        "scores": {
            "database": 2,
            "api": 0,
            "frontend": 0,
            "testing": 0,
            "security": 0,
            "deployment": 0,
            "general": 0,
        },
        "matched": {"database": ["table", "index"]},
    }
    files = cli(
        proj, "classify", "fix it", "--files", "src/api/routes.py,tests/test_x.py", "--json"
    ).json()
    assert files["scores"]["api"] == 2 and files["scores"]["testing"] == 2  # type: ignore[index]
    assert files["domain"] == "api"  # type: ignore[index]  # a tie: the first listed
    nothing = cli(proj, "classify", "say hello")
    assert nothing.out.splitlines()[0] == "general"


def test_classify_with_configured_domain(proj: Path) -> None:
    (proj / ".lore" / "config.yaml").write_text(
        "expertise:\n  domains:\n    mobile:\n      keywords: [ios, android, swift]\n"
        "      globs: ['**/*.swift']\n    database:\n      keywords: [supabase]\n"
    )
    run = cli(proj, "classify", "fix the ios login crash in swift", "--json").json()
    assert run["domain"] == "mobile"  # type: ignore[index]
    assert (
        cli(proj, "classify", "supabase outage", "--json").json()[  # type: ignore[index]
            "domain"
        ]
        == "database"
    )
    (proj / "App.swift").write_text("")
    improved = cli(proj, "improve", "mobile", "--json").json()
    assert [c["data"] for c in improved["changes"]] == ["App.swift"]  # type: ignore[index]


def test_bad_config_is_one_error_line(proj: Path) -> None:
    (proj / ".lore" / "config.yaml").write_text("expertise:\n  max_lines: lots\n")
    assert_one_error_line(cli(proj, "list"), "expertise.max_lines: expected an integer")
    (proj / ".lore" / "config.yaml").write_text("expertise:\n  domains:\n    ../x: {}\n")
    assert_one_error_line(cli(proj, "list"), "config.yaml:3: expertise.domains.../x: a domain name")


def test_learn(proj: Path) -> None:
    run = cli(proj, "learn", "--session", "s-1", "--json")
    assert run.code == 0, run.err
    result = run.json()
    assert result["domain"] == "security"  # type: ignore[index]
    assert result["committed"]  # type: ignore[index]
    human = cli(proj, "learn", "--session", "s-1")
    assert human.out.strip() == ".expertise/security.yaml: learned, no changes"


def test_learn_no_commit(proj: Path) -> None:
    before = git(proj, "rev-parse", "HEAD")
    run = cli(proj, "learn", "--session", "s-1", "--no-commit")
    assert run.code == 0
    assert "change" in run.out
    assert git(proj, "rev-parse", "HEAD") == before


def test_validate_and_history(proj: Path) -> None:
    git(proj, "rm", "-q", "src/auth/jwt.py")
    git(proj, "commit", "-q", "-m", "move auth out")
    run = cli(proj, "validate", "--all")
    assert run.code == 0
    assert "file_removed" in run.out and "committed" in run.out
    history = cli(proj, "history", "security", "--json").json()
    assert history[0]["subject"] == "lore(expertise): security: 1 change"  # type: ignore[index]
    assert history[0]["changes"] == [  # type: ignore[index]
        "file_removed: src/auth/jwt.py no longer exists"
    ]
    assert "lore(expertise): security: 1 change" in cli(proj, "history", "security").out


def test_prompt(proj: Path) -> None:
    run = cli(proj, "prompt", "security")
    # framed as quoted data: the notice, the delimiter, the block with its headings escaped
    assert run.out.startswith(NOTICE + "\n<lorebook-data>\n")
    assert "\n\\## Domain Expertise: Security\n\nJWT access tokens" in run.out
    assert "\\### Lessons from Past Issues\n- **refresh token accepted twice**" in run.out
    assert run.out.endswith("\n</lorebook-data>\n")
    assert "  - Solution: revoke the token family on reuse" in run.out
    by_task = cli(proj, "prompt", "--task", "rotate the jwt signing key", "--json").json()
    assert by_task["domain"] == "security"  # type: ignore[index]
    assert by_task["prompt"] == run.out  # type: ignore[index]
    empty = cli(proj, "prompt", "frontend", "--json").json()
    assert empty["exists"] is False  # type: ignore[index]
    assert "\n\\## Domain Expertise: Frontend\n" in empty["prompt"]  # type: ignore[index]


def test_prompt_is_redacted(proj: Path) -> None:
    token = "ghp_" + "Q1w2E3r4" * 4 + "tyui"
    path = proj / ".expertise" / "security.yaml"
    path.write_text(SECURITY.replace("Never log tokens", f"Never log tokens like {token}"))
    run = cli(proj, "prompt", "security")
    assert token not in run.out and "[REDACTED:github_token]" in run.out
    assert token not in cli(proj, "show", "security").out


def test_help_has_examples(proj: Path) -> None:
    for sub in ("classify", "learn", "validate", "improve", "history", "list", "show", "prompt"):
        run = cli(proj, sub, "--help")
        assert run.code == 0 and "Example" in run.out, sub


# -- the real command ----------------------------------------------------------------------------
def test_real_lore_learn_validate_history(proj: Path) -> None:
    env = clean_env(proj)
    learned = lore("expertise", "learn", "--session", "s-1", "--json", env=env)
    assert learned.code == 0, learned.err
    assert json.loads(learned.out)["domain"] == "security"
    assert lore("expertise", "validate", "security", env=env).code == 0
    history = lore("expertise", "history", "security", env=env)
    assert history.code == 0 and "lore(expertise): security:" in history.out
    shown = lore("expertise", "show", "security", "--json", env=env)
    assert "src/auth/jwt.py" in json.loads(shown.out)["core_files"]


def test_real_lore_bad_input(proj: Path) -> None:
    env = clean_env(proj)
    assert_one_error_line(lore("expertise", "show", "../secrets", env=env), "not a domain name")
    assert_one_error_line(
        lore("expertise", "learn", "--session", "ghost", env=env), "has no actions"
    )
    (proj / ".expertise" / "security.yaml").write_text(
        "a: &a [x, x]\n"
        + "".join(
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        )
    )
    assert_one_error_line(lore("expertise", "validate", "--all", env=env), "alias bomb")


def test_real_lore_without_store(tmp_path: Path) -> None:
    assert_one_error_line(lore("expertise", "list", env=clean_env(tmp_path)), "lore init")


def test_show_json_and_commit_messages_are_redacted(proj: Path) -> None:
    token = "ghp_" + "M5n6B7v8" * 4 + "qwer"
    path = proj / ".expertise" / "security.yaml"
    path.write_text(SECURITY.replace("Never log tokens", f"Never log {token}"))
    assert token not in cli(proj, "show", "security", "--json").out
    data = Lorebook.open(proj, env={}).expertise.get("security")
    assert data["best_practices"] == ["Never log [REDACTED:github_token]"]
    git(proj, "rm", "-q", "src/auth/jwt.py")
    git(proj, "commit", "-q", "-m", "move auth out")
    run = cli(proj, "validate", "security", "--json")
    assert run.code == 0 and token not in run.out
    assert token not in path.read_text()
    assert token not in git(proj, "log", "-p", "-1")
