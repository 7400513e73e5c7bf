"""Git through the `git` binary: read state, file history, and commits of whole files.

The runner every git command of lorebook goes through (`repo`, `remote`, `sync` build on it):
a git process costs a few ms, even on the cold paths (`lore resume`, hooks, export, expertise
updates, auto-drafts); `subprocess` is imported only by the functions that run git.

Errors: git missing, a timeout, a failed command become one-line `LoreError`s (`GitError` for a
failed command, with git's own first line; a failed pull or push carries git's whole message).
The read-state functions (`git_state`, `head`,
`commits_mentioning`) answer None or nothing outside a repository instead: resume, export and
drafts work without git.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import LoreError

TYPE_CHECKING = False  # typing costs milliseconds on the cold paths; mypy still sees it
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Mapping
    from datetime import datetime
    from typing import Any, TypeAlias

    GitState: TypeAlias = dict[str, Any]


class GitError(LoreError):
    """A git command failed; the message is git's own first line."""


def first_line(text: str) -> str:
    """The line of git's output that says what went wrong (quotes around it are dropped)."""
    lines = [
        line.strip().removeprefix("stderr:").strip().strip("'").strip()
        for line in text.strip().splitlines()
    ]
    lines = [line for line in lines if line]
    hint = [line for line in lines if line.lower().startswith(("fatal:", "error:"))]
    return (hint or lines or ["(no message from git)"])[0]


def whole(text: str) -> str:
    """All of git's message, its blank lines dropped: the first line alone loses the list of
    files (`would be overwritten by merge:` and the names under it)."""
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines) or "(no message from git)"


GIT_NOT_FOUND = "the git command was not found: install git and try again"


def cannot_run(exc: OSError) -> LoreError:
    """The one message for a git binary that cannot be started."""
    if isinstance(exc, FileNotFoundError):
        return LoreError(GIT_NOT_FOUND)
    return LoreError("cannot run git: {}", exc.strerror or exc)


# -- running git -----------------------------------------------------------------------------
def _run(
    root: Path,
    *args: str,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = 60,
) -> subprocess.CompletedProcess[str]:
    """`git -C root <args>`; the caller reads the return code. Missing git or a timeout (None: no
    limit) is a LoreError."""
    import os
    import subprocess

    try:
        return subprocess.run(
            ["git", "-C", str(root), *args],
            input=input,
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",  # bytes that are not UTF-8 survive, and round-trip
            stdin=None if input is not None else subprocess.DEVNULL,
            env={**os.environ, **env} if env else None,
            timeout=timeout,
        )
    except OSError as exc:
        raise cannot_run(exc) from None
    except subprocess.TimeoutExpired:
        raise LoreError("git {} took longer than {:.0f}s", args[0], timeout) from None


def _check(root: Path, *args: str, **kwargs: Any) -> str:
    """`git <args>`'s output; GitError naming the command and git's message when it fails."""
    done = _run(root, *args, **kwargs)
    if done.returncode != 0:
        raise GitError("git {} failed: {}", args[0], first_line(done.stderr or done.stdout))
    return done.stdout


def _spawn(root: Path, *args: str) -> subprocess.Popen[str] | None:
    import subprocess

    try:
        return subprocess.Popen(
            ["git", "-C", str(root), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    except OSError:
        return None


def _collect(proc: subprocess.Popen[str] | None, timeout: float = 10) -> str | None:
    import subprocess

    if proc is None:
        return None
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    return out if proc.returncode == 0 else None


# -- read state ------------------------------------------------------------------------------
def _parse_status(status: str) -> tuple[str | None, str | None, int | None, list[str]]:
    branch: str | None = None
    head: str | None = None
    unpushed: int | None = None
    dirty: list[str] = []
    skip_next = False
    for entry in status.split("\0"):
        if skip_next:  # the original path of a rename
            skip_next = False
            continue
        if entry.startswith("# branch.head "):
            name = entry.removeprefix("# branch.head ")
            branch = None if name == "(detached)" else name
        elif entry.startswith("# branch.oid "):
            oid = entry.removeprefix("# branch.oid ")
            head = None if oid == "(initial)" else oid
        elif entry.startswith("# branch.ab "):
            unpushed = int(entry.split()[2].lstrip("+"))
        elif entry.startswith("1 "):
            dirty.append(entry.split(" ", 8)[-1])
        elif entry.startswith("u "):
            dirty.append(entry.split(" ", 10)[-1])
        elif entry.startswith("2 "):
            dirty.append(entry.split(" ", 9)[-1])
            skip_next = True
        elif entry.startswith("? "):
            dirty.append(entry[2:])
    return branch, head, unpushed, dirty


def start_git_state(
    root: Path,
    *,
    max_paths: int = 50,
    exclude: tuple[str, ...] = (),
    cache: Path | None = None,
    redact: Callable[[GitState], GitState] | None = None,
    redact_key: str = "",
    safe_name: Callable[[str], bool] | None = None,
) -> Callable[[], GitState | None]:
    """Start reading branch, head, dirty paths, unpushed count and the last commit.

    The git processes run at once and the returned function collects them, so callers overlap
    git's work with their own. Paths under `exclude` (the action log, whose shards change while
    work goes on) are left out, and git is kept out of them: tracked changes come from a status
    that does not look for untracked files (it only reads the index for excluded paths), the
    untracked ones from a listing of the other top-level entries — so tens of thousands of
    shards are never walked. The state is None outside a git work tree or without git.

    With `cache` (a file), the answer is kept there with the identities of every file it
    depends on, and reused without running git while none of them changed (see `statecache`).
    `redact` is applied before the state is kept or returned (a commit subject or a file name
    may hold a secret); `redact_key` names its rules, so a cache redacted by others is unused;
    nothing is kept when a watched path is not a `safe_name`.
    """
    from . import statecache

    key = statecache.key_for(root, exclude, max_paths, redact_key) if cache is not None else None
    if key is not None and cache is not None:
        cached = statecache.load(cache, key)
        if cached is not None:
            return lambda: cached
    started = statecache.now_ns()
    status_args = ["status", "--porcelain=v2", "--branch", "-z"]
    others = _other_entries(root, exclude) if exclude else None
    if others is None:
        pathspec = ["--", ".", *(f":(exclude){path}" for path in exclude)] if exclude else []
        status_proc = _spawn(root, *status_args, "--untracked-files=normal", *pathspec)
        untracked_proc = None
    else:
        excluded = [f":(exclude){path}" for path in exclude]
        status_proc = _spawn(root, *status_args, "--untracked-files=no", "--", ".", *excluded)
        untracked_proc = (
            _spawn(
                root,
                *("ls-files", "--others", "--exclude-standard", "--directory"),
                *("--no-empty-directory", "--full-name", "-z", "--"),
                *(f":(literal){name}" for name in others),
            )
            if others
            else None
        )
    log_proc = _spawn(root, "log", "-1", "--format=%H%x00%h%x00%s%x00%an%x00%cI")
    ignored_proc = None
    if others is None:
        key = None  # the untracked listing walks the whole tree: no cheap list of what to watch
    elif others and key is not None:  # the ignored directories: where nothing is watched
        ignored_proc = _spawn(
            root,
            *("ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"),
            *("--", *(f":(literal){name}" for name in others)),
        )

    def collect() -> GitState | None:
        status = _collect(status_proc)
        untracked = _collect(untracked_proc)
        log = _collect(log_proc)  # fails harmlessly on a repository without commits
        ignored = _collect(ignored_proc) if ignored_proc is not None else ""
        if status is None:
            return None
        branch, head, unpushed, dirty = _parse_status(status)
        dirty += [path for path in (untracked or "").split("\0") if path]
        last_commit = None
        if head and log:
            full, short, subject, author, date = ([*log.rstrip("\n").split("\0"), "", "", ""])[:5]
            last_commit = {
                "hash": full,
                "short": short,
                "subject": subject,
                "author": author,
                "date": date,
            }
        state = {
            "branch": branch,
            "head": head,
            "dirty": dirty[:max_paths],
            "dirty_count": len(dirty),
            "unpushed": unpushed,
            "last_commit": last_commit,
        }
        keep = True
        if redact is not None:
            state, shown = redact(state), state
            keep = state == shown  # a secret in the state: its paths are not written to a cache
        if keep and key is not None and cache is not None and ignored is not None:
            upstream = next(
                (e[18:] for e in status.split("\0") if e.startswith("# branch.upstream ")), None
            )
            statecache.remember(
                cache,
                key,
                state,
                upstream=upstream,
                ignored=ignored,
                started_ns=started,
                safe_name=safe_name,
            )
        return state

    return collect


def _other_entries(root: Path, exclude: tuple[str, ...]) -> list[str] | None:
    """The top-level entries of `root` but `.git` and the excluded ones (where untracked files
    can be); None when an excluded path is not a top-level name or `root` cannot be listed."""
    names = {path.strip("/") for path in exclude}
    if any("/" in name or name in ("", ".") for name in names):
        return None
    try:
        with os.scandir(root) as entries:
            return sorted(e.name for e in entries if e.name not in names and e.name != ".git")
    except OSError:
        return None


def git_state(root: Path, *, max_paths: int = 50, exclude: tuple[str, ...] = ()) -> GitState | None:
    """The git state of `root` (see `start_git_state`), waiting for it."""
    return start_git_state(root, max_paths=max_paths, exclude=exclude)()


def head(root: Path, *, short: bool = False) -> str | None:
    """The commit HEAD names; None outside a repository, before the first commit, or without
    git (export records it when there is one)."""
    args = ["rev-parse", "--verify", "-q", *(["--short"] if short else []), "HEAD"]
    out = _collect(_spawn(root, *args))
    return (out.strip() or None) if out else None


def root_commit(root: Path) -> str | None:
    """`root:<sha>` of the repository's first commit (of several, when histories were merged,
    the lowest: a stable choice); None outside a repository, before a commit, or without git."""
    try:
        done = _run(root, "rev-list", "--max-parents=0", "HEAD", timeout=10)
    except LoreError:
        return None
    shas = sorted(line.strip() for line in done.stdout.splitlines() if line.strip())
    return f"root:{shas[0]}" if done.returncode == 0 and shas else None


def is_work_tree(root: Path) -> bool:
    done = _run(root, "rev-parse", "--is-inside-work-tree")
    return done.returncode == 0 and done.stdout.strip() == "true"


def repo_path(root: Path, path: Path) -> str:
    """`path` as git names it: relative to the repository's top level."""
    done = _run(root, "rev-parse", "--show-toplevel")
    top = Path(done.stdout.strip()) if done.returncode == 0 else root
    return path.resolve().relative_to(top.resolve()).as_posix()


def staged_paths(root: Path) -> list[str]:
    """Paths whose staged content differs from HEAD (a move: both), from the top level; GitError
    when git cannot tell (a failure is never read as "nothing staged" or "everything staged")."""
    out = _check(root, "diff", "--cached", "--name-only", "--no-renames", "-z")  # unborn: all
    return [p for p in out.split("\0") if p]


def project_paths(root: Path) -> list[str] | None:
    """Tracked paths plus untracked ones git does not ignore (relative to `root`); None when
    git cannot list them."""
    done = _run(root, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    return [p for p in done.stdout.split("\0") if p] if done.returncode == 0 else None


def file_log(root: Path, path: Path, limit: int | None = None) -> list[dict[str, str]]:
    """The commits that touched `path`, newest first, following renames."""
    fmt = "%H%x1f%h%x1f%an%x1f%aI%x1f%s%x1f%b%x1e"
    args = ["log", "--follow", f"--format={fmt}"]
    if limit is not None:
        args.append(f"-n{limit}")
    done = _run(root, *args, "--", str(path))
    if done.returncode != 0:
        return []
    out = []
    for chunk in done.stdout.split("\x1e"):
        parts = chunk.strip("\n").split("\x1f")
        if len(parts) < 6:
            continue
        full, short, author, date, subject, body = parts[:6]
        out.append(
            {
                "commit": full,
                "short": short,
                "author": author,
                "date": date,
                "subject": subject,
                "body": body.strip(),
            }
        )
    return out


def commits_mentioning(root: Path, text: str, limit: int) -> list[tuple[str, str]]:
    """(short hash, subject) of the commits whose message names `text` (any case), newest
    first; nothing outside a repository or without git (a draft is written either way)."""
    args = ["log", f"--grep={text}", "--fixed-strings", "-i", f"-n{limit}", "--format=%h%x00%s"]
    try:
        done = _run(root, *args, timeout=20)
    except LoreError:
        return []
    if done.returncode != 0:
        return []
    out = []
    for line in done.stdout.splitlines():
        short, _, subject = line.partition("\0")
        if short:
            out.append((short, subject))
    return out


# -- committing ------------------------------------------------------------------------------
def commit_file(root: Path, path: Path, message: str) -> str:
    """Commit exactly `path` (its working-tree content) with `message`; return the commit hash.

    Other staged or unstaged changes are never included (`git commit --only`).
    """
    _check(root, "add", "--", str(path))
    _check(root, "commit", "--quiet", "--only", "-F", "-", "--", str(path), input=message)
    return _check(root, "rev-parse", "HEAD").strip()


def reset_path(root: Path, path: Path) -> None:
    """Put `path`'s index entry back to HEAD's. Best effort: it undoes a failed commit, whose
    own error is the one to report."""
    _run(root, "reset", "--quiet", "--", str(path))


def untrack_path(root: Path, path: Path) -> None:
    """Drop `path` from the index (best effort, like `reset_path`)."""
    _run(root, "rm", "--cached", "--quiet", "--ignore-unmatch", "--", str(path))


def init_repository(root: Path, *, branch: str = "main") -> None:
    _check(root, "init", "-q", "-b", branch)


def set_identity(root: Path, name: str, email: str) -> None:
    """The repository's own committer identity (`user.name`, `user.email`)."""
    _check(root, "config", "user.name", name)
    _check(root, "config", "user.email", email)


def commit_all(
    root: Path,
    message: str,
    *,
    author: tuple[str, str] | None = None,
    when: datetime | None = None,
) -> str:
    """Stage everything (`git add -A`) and commit it; return the commit hash. `author` (name,
    email) and `when` are used for both author and committer."""
    env: dict[str, str] = {}
    if author is not None:
        name, email = author
        env.update(
            GIT_AUTHOR_NAME=name,
            GIT_AUTHOR_EMAIL=email,
            GIT_COMMITTER_NAME=name,
            GIT_COMMITTER_EMAIL=email,
        )
    if when is not None:
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S") + (when.strftime("%z") or "+0000")
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    _check(root, "add", "-A", env=env)
    _check(root, "commit", "-q", "-F", "-", input=message, env=env)
    return _check(root, "rev-parse", "HEAD").strip()


# -- syncing ---------------------------------------------------------------------------------
def _top(paths: list[str]) -> list[str]:
    """Pathspecs for folders named from the top level, whatever directory git runs in."""
    return [f":(top,literal){path}" for path in paths]


def changed_under(root: Path, paths: list[str]) -> list[tuple[str, str]]:
    """(status letter, path) of every new, changed or deleted file under `paths` (relative to
    the top level), ignored files left out; `A` new, `M` changed, `D` deleted."""
    out = _check(
        root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *_top(paths)
    )
    found: list[tuple[str, str]] = []
    entries = iter(out.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if "R" in code or "C" in code:
            next(entries, None)  # the original path of a rename
        letter = "D" if "D" in code else "A" if code in ("??", "A ", "AM") else "M"
        found.append((letter, path))
    return found


def file_at(root: Path, revision: str, path: str) -> str | None:
    """The text of `path` (named from the top level) at `revision` (`HEAD`; "" for the index);
    None when it is not there (or there is no commit yet)."""
    done = _run(root, "show", f"{revision}:{path}")
    return done.stdout if done.returncode == 0 else None


def stage_text(root: Path, path: str, text: str) -> None:
    """Stage `text` as the content of `path` (named from the top level) without touching the
    working tree: part of a file's changes can be committed and the rest left as it is."""
    blob = _check(root, "hash-object", "-w", "--stdin", f"--path={path}", input=text).strip()
    _check(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")


def commit_paths(root: Path, paths: list[str], message: str) -> str:
    """Stage exactly `paths` (new, changed or deleted files, named from the top level) and
    commit the index; return the commit hash. The caller makes sure nothing else is staged."""
    if paths:  # no pathspec at all would stage everything
        listed = "".join(f":(top,literal){path}\0" for path in paths)
        _check(root, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", input=listed)
    _check(root, "commit", "--quiet", "-F", "-", input=message)
    return _check(root, "rev-parse", "HEAD").strip()


def upstream(root: Path) -> str | None:
    """The branch's upstream (`origin/main`); None without a remote or an upstream."""
    done = _run(root, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def has_remote(root: Path) -> bool:
    return bool(_check(root, "remote").strip())


def ahead_count(root: Path) -> int:
    """Commits on HEAD that the upstream does not have (after a fetch or pull)."""
    return int(_check(root, "rev-list", "--count", "@{upstream}..HEAD").strip() or 0)
