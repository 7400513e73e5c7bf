"""Learning from real sessions written through the Foundation writer, committed to real git."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import clean_env, git
from lorebook import Lorebook, LoreError
from lorebook.expertise.api import NothingToLearn
from lorebook.expertise.classify import classify
from lorebook.expertise.learn import GLOB_READ, READ_EDIT_TEST, digest, tool_patterns

APP = {
    "src/auth/jwt.py": "ALGORITHM = 'RS256'\n",
    "src/auth/tokens.py": "def rotate(token): ...\n",
    "tests/test_tokens.py": "def test_rotate(): ...\n",
    "docs/notes.md": "notes\n",
}


@pytest.fixture
def proj(store: Path) -> Path:
    git(store, "config", "user.name", "Test")
    git(store, "config", "user.email", "test@example.invalid")
    for rel, text in APP.items():
        (store / rel).parent.mkdir(parents=True, exist_ok=True)
        (store / rel).write_text(text)
    git(store, "add", "src", "tests", "docs")
    git(store, "commit", "-q", "-m", "app")
    return store


def open_book(root: Path) -> Lorebook:
    book = Lorebook.open(root, env={})
    book.install_subscribers()  # learning on session end, when the config switches it on
    return book


def tool(
    s: Any, name: str, outcome: str = "success", error: str | None = None, **context: Any
) -> None:
    s.log("tool_call", outcome=outcome, error=error, context={"tool": name, **context})


def auth_session(book: Lorebook, sid: str, *, fail: bool = True) -> None:
    """A token-rotation session: Read -> Edit -> pytest (fails once) -> Edit -> pytest -> commit."""
    root = book.root
    with book.session(session_id=sid) as s:
        s.log("plan", context={"task": "rotate JWT refresh tokens"}, epic="epic-12")
        tool(s, "Glob", pattern="src/auth/*.py")
        tool(s, "Read", file_path=str(root / "src/auth/tokens.py"))
        tool(s, "Edit", file_path=str(root / "src/auth/tokens.py"))
        if fail:
            tool(s, "Bash", "failure", "AssertionError: token 1234 reused", command="pytest -q")
            tool(s, "Edit", file_path="src/auth/jwt.py")
        tool(s, "Bash", command="pytest -q", description="run the token tests")
        s.log("commit", context={"files": ["src/auth/tokens.py", "tests/test_tokens.py"]})


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def test_learn_from_a_session(proj: Path) -> None:
    book = open_book(proj)
    auth_session(book, "sess-1")
    result = book.expertise.learn("sess-1")
    assert result["domain"] == "security"
    assert result["completed"] is True
    by_type: dict[str, list[Any]] = {}
    for change in result["changes"]:
        by_type.setdefault(change["type"], []).append(change["data"])
    lesson = by_type["failure_learning"][0]
    assert lesson["error"] == "AssertionError: token 1234 reused"
    assert lesson["sessions"] == ["sess-1"]
    assert lesson["solution"] == "after Edit, test succeeded (run the token tests)"
    assert by_type["file_discovered"] == [
        "src/auth/tokens.py",
        "src/auth/jwt.py",
        "tests/test_tokens.py",
    ]
    assert GLOB_READ in by_type["pattern_discovered"]
    assert len(by_type["pattern_discovered"]) <= 5
    technique = by_type["technique_learned"][0]
    assert technique.startswith("rotate JWT refresh tokens: plan → Glob → Read → Edit → test")
    assert "(recovered from 1 failed step)" in technique
    content = book.expertise.get("security")
    assert content["core_files"] == by_type["file_discovered"]
    assert content["learned_from_failures"][0]["timestamp"].endswith("Z")
    # committed: exactly the expertise file, with a structured message
    assert result["committed"] == head(proj)
    assert git(proj, "show", "--name-only", "--format=", "HEAD").split() == [
        ".expertise/security.yaml"
    ]
    message = git(proj, "log", "-1", "--format=%B")
    assert message.startswith(f"lore(expertise): security: {len(result['changes'])} changes\n")
    assert "Learned from session sess-1." in message
    assert "- failure_learning: bash failed" not in message
    assert "- file_discovered: src/auth/tokens.py" in message


def test_learning_the_same_session_twice_changes_nothing(proj: Path) -> None:
    book = open_book(proj)
    auth_session(book, "sess-1")
    book.expertise.learn("sess-1")
    before = head(proj)
    again = book.expertise.learn("sess-1")
    assert again["changes_count"] == 0 and again["committed"] is None
    assert head(proj) == before


def test_repeats_of_the_same_issue_merge_with_session_ids(proj: Path) -> None:
    book = open_book(proj)
    auth_session(book, "sess-1")
    auth_session(book, "sess-2")  # the same failure, another number in the message
    book.expertise.learn("sess-1")
    second = book.expertise.learn("sess-2")
    types = [c["type"] for c in second["changes"]]
    assert "failure_merged" in types and "failure_learning" not in types
    lessons = book.expertise.get("security")["learned_from_failures"]
    assert len(lessons) == 1
    assert lessons[0]["sessions"] == ["sess-1", "sess-2"]


def test_at_most_five_new_patterns_per_run_and_no_duplicates(proj: Path) -> None:
    book = open_book(proj)
    names = [
        "Glob",
        "Read",
        "Grep",
        "Read",
        "Edit",
        "Bash",
        "Write",
        "Grep",
        "Glob",
        "LS",
        "Read",
        "WebFetch",
        "Task",
    ]
    with book.session(session_id="many") as s:
        for name in names:
            tool(s, name, command="ls")
    first = book.expertise.learn("many", domain="general")
    patterns = [c["data"] for c in first["changes"] if c["type"] == "pattern_discovered"]
    assert len(patterns) == 5 == len(set(patterns))
    second = book.expertise.learn("many", domain="general")
    more = [c["data"] for c in second["changes"] if c["type"] == "pattern_discovered"]
    assert 0 < len(more) <= 5 and not set(more) & set(patterns)
    stored = book.expertise.get("general")["effective_patterns"]
    assert len(stored) == len(set(stored)) == len(patterns) + len(more)


def test_read_edit_test_and_glob_read_patterns() -> None:
    def call(name: str, outcome: str = "success", **ctx: Any) -> dict[str, Any]:
        return {
            "kind": "action",
            "type": "tool_call",
            "outcome": outcome,
            "context": {"tool": name, **ctx},
        }

    found = tool_patterns(
        [call("Glob"), call("Read"), call("Edit"), call("Bash", command="pytest")]
    )
    assert found[:2] == [READ_EDIT_TEST, GLOB_READ]
    assert "Successful combo: Edit → test" in found
    # a failed test run is not an effective sequence; a failed Read breaks Glob -> Read
    failed = tool_patterns(
        [
            call("Glob"),
            call("Read", "failure"),
            call("Edit"),
            call("Bash", "failure", command="pytest"),
        ]
    )
    assert READ_EDIT_TEST not in failed and GLOB_READ not in failed


def test_modified_files_are_repository_relative_existing_and_outside_the_store(
    proj: Path, tmp_path: Path
) -> None:
    book = open_book(proj)
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x")
    with book.session(session_id="files") as s:
        tool(s, "Write", file_path=str(outside))
        tool(s, "Write", file_path="../escape.py")
        tool(s, "Edit", file_path="src/auth/gone.py")  # never existed
        tool(s, "Edit", "failure", "old_string not found", file_path="docs/notes.md")
        tool(s, "Write", file_path=str(proj / ".lore" / "config.yaml"))
        tool(s, "MultiEdit", file_path="./src/auth/../auth/jwt.py")
        s.log("commit", context={"files": ["docs/notes.md", 7, "actionlog/x.jsonl"]})
    facts = digest("files", book.iter_actions(newest_first=False), proj, [".lore", "actionlog"])
    assert facts.files == ["src/auth/jwt.py", "docs/notes.md"]


def test_completed_means_epic_complete_or_a_normal_end_after_success(proj: Path) -> None:
    book = open_book(proj)
    with book.session(session_id="done") as s:
        tool(s, "Bash", "failure", "boom", command="make")
    with book.session(session_id="epic") as s:
        tool(s, "Bash", "failure", "boom", command="make")
        s.log("epic_complete", epic="epic-1")
        tool(s, "Bash", "failure", "boom", command="make")
    s3 = book.start_session(session_id="cut")
    s3.log("deploy")
    s3.end(reason="network_disconnect")
    facts = {sid: digest(sid, _records(book, sid), proj) for sid in ("done", "epic", "cut")}
    assert facts["done"].completed is False
    assert facts["epic"].completed is True
    assert facts["cut"].completed is False
    assert facts["epic"].technique is not None and facts["cut"].technique is None


def _records(book: Lorebook, sid: str) -> list[dict[str, Any]]:
    from lorebook.log.reader import iter_records

    return list(iter_records(book.layout.actionlog, base=book.root, sessions=[sid]))


def test_a_session_without_actions_is_refused(proj: Path) -> None:
    book = open_book(proj)
    with book.session(session_id="empty"):
        pass
    with pytest.raises(NothingToLearn, match="session 'empty' has no actions in the log"):
        book.expertise.learn("empty")
    with pytest.raises(LoreError, match="session id"):
        book.expertise.learn("../../etc/passwd")
    assert not (proj / ".expertise" / "general.yaml").exists()


def test_secrets_in_error_text_never_reach_the_file(proj: Path) -> None:
    book = open_book(proj)
    token = "ghp_" + "Z9y8X7w6" * 4 + "abcd"
    with book.session(session_id="leak") as s:
        # the writer redacts the log line; a file edited by hand still gets redacted on write
        tool(s, "Bash", "failure", f"push rejected for {token}", command="git push")
    (proj / ".expertise").mkdir(exist_ok=True)
    (proj / ".expertise" / "deployment.yaml").write_text(f"domain: deployment\noverview: {token}\n")
    book.expertise.learn("leak", domain="deployment", commit=False)
    text = (proj / ".expertise" / "deployment.yaml").read_text()
    assert token not in text
    assert "[REDACTED:github_token]" in text


def test_unrelated_staged_changes_are_refused_and_unstaged_ones_never_swept(proj: Path) -> None:
    book = open_book(proj)
    auth_session(book, "sess-1")
    (proj / "docs" / "notes.md").write_text("staged edit\n")
    git(proj, "add", "docs/notes.md")
    before = head(proj)
    with pytest.raises(LoreError, match=r"staged changes \(docs/notes.md\)"):
        book.expertise.learn("sess-1")
    assert head(proj) == before
    assert not (proj / ".expertise" / "security.yaml").exists()
    git(proj, "reset", "-q")  # now only unstaged: allowed, and left alone
    result = book.expertise.learn("sess-1")
    assert git(proj, "show", "--name-only", "--format=", "HEAD").split() == [
        ".expertise/security.yaml"
    ]
    assert result["committed"] == head(proj)
    assert " M docs/notes.md" in git(proj, "status", "--porcelain")


def test_no_commit_writes_without_committing(proj: Path) -> None:
    book = open_book(proj)
    auth_session(book, "sess-1")
    before = head(proj)
    result = book.expertise.learn("sess-1", commit=False)
    assert result["committed"] is None and result["changes_count"] > 0
    assert head(proj) == before
    assert (proj / ".expertise" / "security.yaml").exists()


def test_a_failed_commit_puts_the_file_back(proj: Path) -> None:
    book = open_book(proj)
    auth_session(book, "sess-1")
    hook = proj / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'policy: no commits today' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(LoreError, match="git commit failed: policy: no commits today"):
        book.expertise.learn("sess-1")
    assert not (proj / ".expertise" / "security.yaml").exists()
    assert "security.yaml" not in git(proj, "status", "--porcelain", "--untracked-files=all")


def test_outside_git_the_file_is_written_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    book = Lorebook.init(root, env={})
    with book.session(session_id="p1") as s:
        s.log("deploy", context={"task": "deploy the docker image"})
    result = book.expertise.learn("p1")
    assert result["domain"] == "deployment"
    assert result["committed"] is None
    assert "not a git repository" in result["warnings"][0]


def test_line_limit_from_config_prunes_on_learn(proj: Path) -> None:
    (proj / ".lore" / "config.yaml").write_text("expertise:\n  max_lines: 40\n")
    lines = ["domain: security", "learned_from_failures:"]
    for i in range(15):
        lines += [f"  - issue: old issue {i}", f"    error: old error {i}"]
    (proj / ".expertise").mkdir(exist_ok=True)
    (proj / ".expertise" / "security.yaml").write_text("\n".join(lines) + "\n")
    book = open_book(proj)
    auth_session(book, "sess-1")
    result = book.expertise.learn("sess-1")
    pruned = [c for c in result["changes"] if c["type"] == "pruned"]
    assert pruned and pruned[0]["data"]["key"] == "learned_from_failures"
    lessons = book.expertise.get("security")["learned_from_failures"]
    assert len(lessons) == 10
    assert lessons[-1]["error"] == "AssertionError: token 1234 reused"  # the newest is kept


# -- on session end ------------------------------------------------------------------------------
def test_session_end_subscriber_is_off_by_default(proj: Path) -> None:
    book = open_book(proj)
    auth_session(book, "sess-1")
    assert not (proj / ".expertise" / "security.yaml").exists()


def test_session_end_subscriber_learns_when_switched_on(proj: Path) -> None:
    (proj / ".lore" / "config.yaml").write_text("expertise:\n  learn_on_session_end: true\n")
    book = open_book(proj)
    auth_session(book, "sess-1")
    content = book.expertise.get("security")
    assert "src/auth/tokens.py" in content["core_files"]
    assert git(proj, "log", "-1", "--format=%s").startswith("lore(expertise): security:")
    with book.session(session_id="nothing"):  # no actions: quietly nothing
        pass


def test_session_end_subscriber_through_the_real_cli(proj: Path) -> None:
    (proj / ".lore" / "config.yaml").write_text("expertise:\n  learn_on_session_end: true\n")
    env = clean_env(proj, LORE_SESSION="cli-1")
    run = [sys.executable, "-m", "lorebook"]
    for args in (
        ["log", "deploy", "--context", '{"task": "deploy the docker image"}'],
        ["session", "end"],
    ):
        done = subprocess.run([*run, *args], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    assert git(proj, "log", "-1", "--format=%s") == "lore(expertise): deployment: 1 change\n"


def test_subscriber_failures_become_a_warning_not_an_error(
    proj: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / ".lore" / "config.yaml").write_text("expertise:\n  learn_on_session_end: true\n")
    (proj / ".expertise").mkdir(exist_ok=True)
    (proj / ".expertise" / "deployment.yaml").write_text("- not a mapping\n")
    book = open_book(proj)
    with book.session(session_id="warn") as s:
        s.log("deploy", context={"task": "docker release"})
    err = capsys.readouterr().err
    assert "lore: warning: expertise not updated for session warn" in err
    assert ".expertise/deployment.yaml:1: an expertise file is a mapping" in err


def test_classification_of_a_session_uses_task_text_and_files() -> None:
    assert classify("rotate JWT refresh tokens", ["tests/test_tokens.py"]).domain == "security"
    assert classify("", ["tests/test_a.py"]).domain == "testing"


def test_subscriber_keeps_the_append_path_light(proj: Path) -> None:
    """With learning on session end switched on, logging actions still loads no YAML library;
    `import lorebook` never loads the expertise modules."""
    (proj / ".lore" / "config.yaml").write_text("expertise:\n  learn_on_session_end: true\n")
    code = (
        "import json, sys\nfrom lorebook import Lorebook\n"
        f"book = Lorebook.open({str(proj)!r}, env={{}})\n"
        "book.install_subscribers()\n"
        "book.log('plan', session='light-1')\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    for _ in range(2):  # the first run parses the new config.yaml and caches it as JSON
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=clean_env(),
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
    modules = set(json.loads(done.stdout))
    assert "lorebook.expertise.subscriber" in modules  # it is registered ...
    assert not {m for m in modules if m.split(".")[0] in ("ruamel", "git", "click")}
    assert "lorebook.expertise.api" not in modules  # ... and loads nothing until a session ends


def test_concurrent_learns_into_one_file_lose_nothing(proj: Path) -> None:
    """Two `lore expertise learn` processes at once: both updates land, one commit each."""
    book = open_book(proj)
    for sid in ("par-1", "par-2"):
        with book.session(session_id=sid) as s:
            tool(s, "Bash", "failure", f"{sid} broke the build", command="make")
            s.log(
                "commit",
                context={"files": ["docs/notes.md" if sid == "par-1" else "src/auth/jwt.py"]},
            )
    env = clean_env(proj)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lorebook",
                "expertise",
                "learn",
                "--session",
                sid,
                "--domain",
                "deployment",
                "--json",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for sid in ("par-1", "par-2")
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert json.loads(out)["committed"]
    content = book.expertise.get("deployment")
    assert sorted(content["core_files"]) == ["docs/notes.md", "src/auth/jwt.py"]
    [lesson] = content["learned_from_failures"]  # the same error (numbers aside): merged
    assert sorted(lesson["sessions"]) == ["par-1", "par-2"]
    subjects = git(proj, "log", "-2", "--format=%s").splitlines()
    assert all(s.startswith("lore(expertise): deployment:") for s in subjects)
    assert git(proj, "status", "--porcelain", ".expertise/deployment.yaml") == ""
