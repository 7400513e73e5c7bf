"""`lorebook.git` is the one way lorebook talks to git: an AST check of the sources, and the
package's functions against real repositories in temp dirs."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

import lorebook
import lorebook.git
from conftest import assert_one_error_line, clean_env, git, lore
from lorebook.errors import LoreError
from lorebook.git import binary as lgit
from lorebook.git import repo as grepo

SRC = Path(lorebook.__file__).parent
GIT_PACKAGE = SRC / "git"
# modules that run another program than git, and which one
OTHER_PROGRAMS = {
    "knowledge/review.py": "gh",
    "tui/drafts.py": "$EDITOR",
    "child.py": "sys.executable",
}
RUNNERS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}
OS_RUNNERS = {
    "system",
    "popen",
    "execv",
    "execvp",
    "execvpe",
    "execl",
    "execlp",
    "spawnv",
    "spawnvp",
    "spawnl",
    "spawnlp",
    "posix_spawn",
    "posix_spawnp",
}


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        if GIT_PACKAGE in path.parents:
            continue
        out.append((path.relative_to(SRC).as_posix(), ast.parse(path.read_text(), str(path))))
    return out


def _names_git(node: ast.expr) -> bool:
    """An argv (or command string) whose program is git."""
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        node = node.elts[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split(" ")[0] in ("git", "/usr/bin/git")
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        return isinstance(first, ast.Constant) and str(first.value).startswith("git ")
    return False


def test_no_git_process_or_gitpython_outside_the_git_package() -> None:
    found = []
    for rel, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    if top == "git" or (top == "subprocess" and rel not in OTHER_PROGRAMS):
                        found.append(f"{rel}:{node.lineno}: import {alias.name}")
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                top = (node.module or "").split(".")[0]
                if top == "git" or (top == "subprocess" and rel not in OTHER_PROGRAMS):
                    found.append(f"{rel}:{node.lineno}: from {node.module} import ...")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                module = owner.id if isinstance(owner, ast.Name) else ""
                runs = (module == "subprocess" and node.func.attr in RUNNERS) or (
                    module == "os" and node.func.attr in OS_RUNNERS
                )
                if runs and node.args and _names_git(node.args[0]):
                    found.append(f"{rel}:{node.lineno}: runs git")
                which = module == "shutil" and node.func.attr == "which"
                if which and node.args and _names_git(node.args[0]):
                    found.append(f"{rel}:{node.lineno}: looks for git")
    assert found == []


def test_modules_running_other_programs_never_run_git() -> None:
    for rel, program in OTHER_PROGRAMS.items():
        text = (SRC / rel).read_text()
        tree = ast.parse(text)
        argv_heads = {
            node.args[0].elts[0].value
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.List)
            and node.args[0].elts
            and isinstance(node.args[0].elts[0], ast.Constant)
        }
        assert "git" not in argv_heads, rel
        assert program in text


def test_no_private_name_of_the_git_package_is_used_outside_it() -> None:
    found = []
    for rel, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and "git" in (node.module or "").split("."):
                # `from ..git import x`, `from ..git.binary import x`, `from .. import git`
                if node.module is not None and node.module.split(".")[-1] not in (
                    "git",
                    "binary",
                    "repo",
                ):
                    continue
                private = [a.name for a in node.names if a.name.startswith("_")]
                found += [f"{rel}:{node.lineno}: {name}" for name in private]
        # attribute access on the imported package: `git._run(...)`
        imported_as = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level > 0
            for alias in node.names
            if alias.name in ("git", "binary", "repo")
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in imported_as
                and node.attr.startswith("_")
            ):
                found.append(f"{rel}:{node.lineno}: {node.value.id}.{node.attr}")
    assert found == []


def test_the_ast_check_sees_a_git_process() -> None:
    """The check above is not vacuous: it flags the shapes the old modules used."""
    sample = ast.parse(
        "import subprocess\n"
        "subprocess.run(['git', '-C', str(root), 'log'])\n"
        "subprocess.Popen(('git', 'status'))\n"
        "os.system(f'git commit -m {m}')\n"
    )
    calls = [n for n in ast.walk(sample) if isinstance(n, ast.Call) and n.args]
    assert [_names_git(c.args[0]) for c in calls if isinstance(c.func, ast.Attribute)] == [
        True,
        True,
        True,
    ]


def test_importing_the_package_loads_neither_gitpython_nor_subprocess() -> None:
    code = (
        "import json, sys\nimport lorebook.git, lorebook.paths\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(json.loads(done.stdout))
    assert {"git", "subprocess", "typing"} & modules == set()
    assert {"lorebook.git.binary", "lorebook.git.repo"} & modules == set()


def test_lore_log_in_a_store_loads_no_git_module(store: Path) -> None:
    code = (
        "import json, sys\nimport lorebook.cli\ncode = lorebook.cli.main(['log', 'plan'])\n"
        "print(json.dumps([code, sorted(m for m in sys.modules if 'git' in m)]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=clean_env(store),
        cwd=store,
        check=True,
    )
    assert json.loads(done.stdout.splitlines()[-1]) == [0, []]


def test_one_git_layer_and_no_gitpython() -> None:
    """Every git command runs through `lorebook.git.binary`'s runner: no module, the git package
    included, imports GitPython, and it is not a dependency."""
    import tomllib

    project = tomllib.loads((SRC.parent.parent / "pyproject.toml").read_text())["project"]
    assert not [dep for dep in project["dependencies"] if dep.lower().startswith("gitpython")]
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in ("git", "gitdb")]
    assert found == []
    package = lorebook.git.__doc__ or ""
    assert "binary" in package and "cold" in package and "GitPython" not in package
    assert "read-only" not in (lgit.__doc__ or "").lower()


# -- the functions, against real repositories -------------------------------------------------
@pytest.fixture
def identity(repo: Path) -> Path:
    lgit.set_identity(repo, "Lore Test", "lore@example.invalid")
    return repo


def test_state_of_a_repository(repo: Path) -> None:
    (repo / "new.txt").write_text("x\n")
    (repo / "README.md").write_text("# changed\n")
    state = lgit.git_state(repo)
    assert state is not None
    assert state["branch"] == "main"
    assert state["head"] == git(repo, "rev-parse", "HEAD").strip()
    assert sorted(state["dirty"]) == ["README.md", "new.txt"] and state["dirty_count"] == 2
    assert state["last_commit"]["subject"] == "initial"
    assert lgit.git_state(repo, exclude=("new.txt",))["dirty"] == ["README.md"]  # type: ignore[index]
    assert lgit.is_work_tree(repo)
    assert lgit.head(repo) == state["head"]
    assert lgit.head(repo, short=True) == git(repo, "rev-parse", "--short", "HEAD").strip()


def test_state_outside_a_repository_is_none(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    assert lgit.git_state(outside) is None
    assert lgit.head(outside) is None
    assert not lgit.is_work_tree(outside)
    assert lgit.commits_mentioning(outside, "epic-1", 5) == []
    assert lorebook.git.toplevel(outside) is None


def test_head_before_the_first_commit_is_none(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    assert lgit.head(tmp_path) is None
    (tmp_path / "a.txt").write_text("a\n")
    git(tmp_path, "add", "a.txt")
    assert lgit.staged_paths(tmp_path) == ["a.txt"]  # no HEAD: everything staged is new


def test_toplevel_and_paths(repo: Path) -> None:
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    (sub / "mod.py").write_text("x = 1\n")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "debug.log").write_text("noise\n")
    assert lorebook.git.toplevel(sub) == repo
    assert lgit.repo_path(sub, sub / "mod.py") == "src/pkg/mod.py"
    listed = lgit.project_paths(repo)
    assert listed is not None
    assert {"README.md", ".gitignore", "src/pkg/mod.py"} <= set(listed)
    assert "debug.log" not in listed


def test_commit_file_commits_exactly_that_file(identity: Path) -> None:
    repo = identity
    (repo / "other.txt").write_text("staged by someone\n")
    git(repo, "add", "other.txt")
    (repo / "README.md").write_text("# not staged\n")
    target = repo / "notes.md"
    target.write_text("line one\n")
    commit = lgit.commit_file(repo, target, "notes: first\n\n- line one\n")
    assert commit == git(repo, "rev-parse", "HEAD").strip()
    assert git(repo, "show", "-s", "--format=%an|%s|%b", "HEAD").strip() == (
        "Lore Test|notes: first|- line one"
    )
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["notes.md"]
    assert lgit.staged_paths(repo) == ["other.txt"]  # someone else's work is still staged
    assert "README.md" in git(repo, "status", "--porcelain")


def test_commit_failure_is_one_line_and_reset_undoes_the_add(identity: Path) -> None:
    repo = identity
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'hint: read this' >&2\necho 'error: refused' >&2\nexit 1\n")
    hook.chmod(0o755)
    target = repo / "README.md"
    target.write_text("# changed\n")
    with pytest.raises(lgit.GitError) as info:
        lgit.commit_file(repo, target, "change")
    assert str(info.value) == "git commit failed: error: refused"
    lgit.reset_path(repo, target)
    assert lgit.staged_paths(repo) == []
    new = repo / "new.md"
    new.write_text("n\n")
    git(repo, "add", "new.md")
    lgit.untrack_path(repo, new)
    assert lgit.staged_paths(repo) == [] and new.exists()


def test_file_log_follows_renames(identity: Path) -> None:
    repo = identity
    (repo / "a.yaml").write_text("k: 1\n")
    lgit.commit_file(repo, repo / "a.yaml", "add a\n\n- first\n")
    git(repo, "mv", "a.yaml", "b.yaml")
    git(repo, "commit", "-q", "-m", "rename a to b")
    entries = lgit.file_log(repo, repo / "b.yaml")
    assert [e["subject"] for e in entries] == ["rename a to b", "add a"]
    assert entries[1]["body"] == "- first" and entries[1]["author"] == "Lore Test"
    assert lgit.file_log(repo, repo / "b.yaml", limit=1)[0]["subject"] == "rename a to b"


def test_commits_mentioning(repo: Path) -> None:
    git(repo, "commit", "-q", "--allow-empty", "-m", "feat: EPIC-7 login")
    git(repo, "commit", "-q", "--allow-empty", "-m", "chore: unrelated")
    git(repo, "commit", "-q", "--allow-empty", "-m", "fix: epic-7 logout")
    found = lgit.commits_mentioning(repo, "epic-7", 10)
    assert [subject for _, subject in found] == ["fix: epic-7 logout", "feat: EPIC-7 login"]
    assert found[0][0] == git(repo, "rev-parse", "--short", "HEAD").strip()
    assert len(lgit.commits_mentioning(repo, "epic-7", 1)) == 1


def test_commit_all_with_author_and_date(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    root.mkdir()
    lgit.init_repository(root, branch="trunk")
    (root / "a.txt").write_text("a\n")
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    commit = lgit.commit_all(root, "scaffold", author=("Demo", "demo@example.invalid"), when=when)
    shown = git(root, "show", "-s", "--format=%H|%an|%ae|%cn|%aI|%cI|%s", "HEAD").strip()
    assert shown == (
        f"{commit}|Demo|demo@example.invalid|Demo|2026-01-02T03:04:05+00:00|"
        "2026-01-02T03:04:05+00:00|scaffold"
    )
    assert git(root, "branch", "--show-current").strip() == "trunk"


def test_failures_are_one_line_lore_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    with pytest.raises(lgit.GitError) as info:
        lgit.commit_all(outside, "nothing")
    assert str(info.value).startswith("git add failed: fatal: not a git repository")
    with pytest.raises(LoreError, match="is not inside a git repository") as info2:
        grepo.open_repo(outside)
    assert "\n" not in str(info2.value)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(LoreError) as info3:
        lgit.commit_all(outside, "nothing")
    assert str(info3.value) == "the git command was not found: install git and try again"
    assert lgit.git_state(outside) is None  # reading state without git: no state
    assert lgit.head(outside) is None


# -- review's commits and history (lorebook.git.repo) ----------------------------------------------
def _snapshot(repo: Path) -> tuple[str, str, str, bytes, dict[str, bytes]]:
    files = {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in repo.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }
    return (
        git(repo, "rev-parse", "HEAD"),
        git(repo, "branch", "--show-current"),
        git(repo, "status", "--porcelain", "--untracked-files=all"),
        (repo / ".git" / "index").read_bytes(),
        files,
    )


def test_branch_commit_in_a_temporary_index_touches_nothing_else(identity: Path) -> None:
    repo = identity
    (repo / "drafts").mkdir()
    (repo / "drafts" / "x.md").write_text("draft\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "draft x")
    (repo / "README.md").write_text("# edited, not staged\n")
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    before = _snapshot(repo)
    handle = grepo.open_repo(repo)
    commit = grepo.commit_on_new_branch(
        handle, "review/x", "publish x\n", {"published/x.md": b"published\n"}, ["drafts/x.md"]
    )
    assert _snapshot(repo) == before  # work tree, real index, HEAD and branch as they were
    assert git(repo, "rev-parse", "review/x").strip() == commit
    assert git(repo, "show", f"{commit}:published/x.md") == "published\n"
    assert "drafts/x.md" not in git(repo, "ls-tree", "-r", "--name-only", commit)
    assert "staged.txt" not in git(repo, "ls-tree", "-r", "--name-only", commit)
    assert git(repo, "rev-parse", f"{commit}^").strip() == before[0].strip()
    with pytest.raises(lgit.GitError, match="git update-ref failed"):  # create only
        grepo.commit_on_new_branch(handle, "review/x", "again", {"y.md": b"y\n"}, [])
    assert grepo.branch_exists(handle, "review/x")
    assert not grepo.is_branch_name(handle, "bad..name")


def test_commit_changes_and_path_history(identity: Path) -> None:
    repo = identity
    handle = grepo.open_repo(repo)
    draft = repo / "drafts" / "x.md"
    draft.parent.mkdir()
    draft.write_text("draft\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "draft x")
    published = repo / "learnings" / "x.md"
    grepo.commit_changes(
        handle, "publish x", writes={published: b"x\n"}, removes=[draft], rels=["learnings/x.md"]
    )
    assert not draft.exists() and published.read_text() == "x\n"
    history = grepo.path_history(handle, ["learnings/x.md", "drafts/x.md"])
    assert [(h.subject, h.change, h.path) for h in history] == [
        ("publish x", "R", "learnings/x.md"),
        ("draft x", "A", "drafts/x.md"),
    ]
    assert grepo.last_commit(handle, "drafts/x.md") == history[0].short
    assert grepo.newest_commit_per_file(handle, ["learnings"]) == {
        "learnings/x.md": history[0].commit
    }


def test_commit_changes_undoes_everything_when_the_commit_fails(identity: Path) -> None:
    repo = identity
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'refused by policy' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = _snapshot(repo)
    handle = grepo.open_repo(repo)
    with pytest.raises(lgit.GitError, match="git commit failed: refused by policy"):
        grepo.commit_changes(
            handle,
            "m",
            writes={repo / "n.md": b"n\n"},
            removes=[repo / "README.md"],
            rels=["n.md"],
        )
    after = _snapshot(repo)
    assert after[:3] == before[:3] and after[4] == before[4]


def test_git_error_text_is_gits_first_meaningful_line() -> None:
    wrapped = (
        "Cmd('git') failed due to: exit code(128)\n  stderr: 'fatal: 'nowhere' does not appear'"
    )
    assert lgit.first_line(wrapped) == "fatal: 'nowhere' does not appear"
    assert lgit.first_line("") == "(no message from git)"


def test_review_without_a_git_binary_is_one_line(store: Path, tmp_path: Path) -> None:
    """Without git on PATH the command says what to do instead."""
    empty = tmp_path / "no-git"
    empty.mkdir()
    result = lore("history", "2026-01-01-x", env=clean_env(store, PATH=str(empty)))
    assert result.code == 1
    assert_one_error_line(result, "the git command was not found: install git and try again")


# -- one staged_paths --------------------------------------------------------------------------
def _lose_head_tree(repo: Path) -> None:
    """Delete the loose object of HEAD's tree: git can no longer diff the index against HEAD,
    while the index itself still reads fine."""
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    (repo / ".git" / "objects" / tree[:2] / tree[2:]).unlink()


def test_staged_paths_is_a_git_error_when_git_cannot_compare_the_index(repo: Path) -> None:
    """The two copies differed here: the binary one read a failed `git diff --cached` as "every
    file in the index is staged" (listed relative to the folder it ran in), the GitPython one
    reported the failure. Nothing staged cannot be told from a broken HEAD: the failure is news."""
    sub = repo / "src"
    sub.mkdir()
    (sub / "a.py").write_text("a = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add a")
    _lose_head_tree(repo)
    for where in (repo, sub):
        with pytest.raises(lgit.GitError) as info:
            lgit.staged_paths(where)
        assert str(info.value) == "git diff failed: error: bad tree object HEAD"


def test_sync_over_a_broken_head_names_gits_error_not_staged_files(store: Path) -> None:
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "store")
    assert lore("log", "plan", cwd=store).code == 0
    _lose_head_tree(store)
    result = lore("sync", "--no-push", cwd=store)
    assert_one_error_line(result, "git diff failed: error: bad tree object HEAD")


def test_a_staged_move_lists_both_of_its_paths(repo: Path) -> None:
    """A move is a deletion and an addition: the path it left is staged too (git's rename
    detection would name only the new one, and a commit of "the store's files" would carry the
    deletion outside the store along unseen)."""
    git(repo, "mv", "README.md", "NOTES.md")
    assert sorted(lgit.staged_paths(repo)) == ["NOTES.md", "README.md"]


def test_sync_refuses_a_move_into_the_store_from_outside(store: Path) -> None:
    (store / "notes").mkdir()
    (store / "notes" / "plan.md").write_text("".join(f"step {n}\n" for n in range(40)))
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "store and notes")
    git(store, "mv", "notes/plan.md", "learnings/drafts/plan.md")
    result = lore("sync", "--no-push", cwd=store)
    assert_one_error_line(result, "staged changes outside the store: notes/plan.md")
    assert git(store, "log", "--format=%s").splitlines() == ["store and notes", "initial"]
