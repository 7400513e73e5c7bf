"""Which repository a store belongs to, so that its worktrees and clones share one project.

The folder's name is no identity: Claude Code puts worktrees in folders of their own, and a
clone may have any name. The repository is known by its `origin` remote (normalised: scheme,
credentials, port and `.git` dropped, the host in lower case), else, without a remote, by its
first (root) commit (`binary.root_commit`). Its display name -- the default project -- is
the remote's last part, else the main checkout's folder. Read from git's own files with
`os.path` alone (the append path uses it: no git process, no pathlib, and outside the `git`
package, which `lore log` never loads).

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import os
import re

from .paths import git_toplevel_dir

_SECTION = re.compile(r'^\s*\[\s*remote\s+"origin"\s*\]')
_URL = re.compile(r"^\s*url\s*=\s*(.*?)\s*$", re.IGNORECASE)
_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")  # git@host:org/repo
_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


class RepoId:
    """A store's repository: `key` (its normalised remote; None without one) and `name` (for
    display), plus the main checkout's folder (a name older records may carry)."""

    __slots__ = ("common", "key", "main_folder", "name", "top")

    def __init__(self, top: str, common: str, remote: str | None) -> None:
        self.top = top
        self.common = common
        self.key = normalise_remote(remote) if remote else None
        base = os.path.basename(common.rstrip(os.sep))
        self.main_folder = (
            os.path.basename(os.path.dirname(common.rstrip(os.sep)))
            if base == ".git"
            else base.removesuffix(".git")
        )  # a bare repository's own name
        self.name = display_name(self.key) if self.key else None
        self.name = self.name or safe_name(self.main_folder)


def git_dirs(root: str) -> tuple[str, str, str] | None:
    """(top level, this checkout's git dir, the repository's common git dir) of the repository
    holding `root`, from its `.git` (a folder, or a worktree's file naming its git dir)."""
    top = git_toplevel_dir(root)
    if top is None:
        return None
    gitdir = os.path.join(top, ".git")
    if os.path.isfile(gitdir):  # a worktree or submodule: "gitdir: <path>"
        text = _read(gitdir)
        if text is None or not text.startswith("gitdir:"):
            return None
        gitdir = os.path.normpath(os.path.join(top, text[len("gitdir:") :].strip()))
    common = gitdir
    pointer = _read(os.path.join(gitdir, "commondir"))
    if pointer:  # a worktree's git dir points at the repository's own
        common = os.path.normpath(os.path.join(gitdir, pointer.strip()))
    return top, gitdir, common


def repo_of(root: str) -> RepoId | None:
    """The repository holding `root`; None outside one."""
    dirs = git_dirs(root)
    if dirs is None:
        return None
    top, _, common = dirs
    return RepoId(top, common, origin_url(os.path.join(common, "config")))


def head_branch(root: str) -> str | None:
    """The branch checked out where `root` is (a worktree's own), from its HEAD file; None
    outside a repository or on a detached HEAD."""
    dirs = git_dirs(root)
    head = _read(os.path.join(dirs[1], "HEAD")) if dirs else None
    if head is None or not head.startswith("ref: refs/heads/"):
        return None
    return head[len("ref: refs/heads/") :].strip() or None


def origin_url(config: str) -> str | None:
    """`remote.origin.url` from a git config file (the first one; includes not followed)."""
    text = _read(config)
    if text is None:
        return None
    inside = False
    for line in text.splitlines():
        if line.lstrip().startswith("["):
            inside = bool(_SECTION.match(line))
            continue
        found = _URL.match(line) if inside else None
        if found and found.group(1):
            return found.group(1).strip('"')
    return None


def normalise_remote(url: str) -> str | None:
    """`https://user:token@GitHub.com:443/Org/App.git` and `git@github.com:Org/App` alike as
    `github.com/Org/App`: credentials never kept; a local path stays a path."""
    url = url.strip().split("?", 1)[0].split("#", 1)[0]
    if "://" in url:
        scheme, rest = url.split("://", 1)
        if scheme.lower() == "file":
            return _path_key(rest)
        host, _, path = rest.partition("/")
        host = host.rsplit("@", 1)[-1].split(":", 1)[0].lower()  # no credentials, no port
        key = f"{host}/{path}"
    elif (scp := _SCP.match(url)) and not os.path.isabs(url):
        key = f"{scp.group(1).lower()}/{scp.group(2)}"
    else:
        return _path_key(url)
    key = key.strip("/").removesuffix(".git").strip("/")
    return key if "/" in key else None


def _path_key(path: str) -> str | None:
    if not path:
        return None
    return os.path.normpath(path).removesuffix(os.sep + ".git").removesuffix(".git") or None


def display_name(key: str) -> str | None:
    """The repository's name as people say it: the key's last part."""
    return safe_name(key.rstrip("/").rsplit("/", 1)[-1])


def safe_name(text: str) -> str | None:
    """`text` as a project name (`model.NAME_RE`): other characters become `-`; None if empty."""
    name = _NAME_CHARS.sub("-", text).strip("-._")[:128]
    return name or None


def _read(path: str) -> str | None:
    try:
        if os.path.islink(path):
            return None  # never read through a link
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(1 << 20)
    except OSError:
        return None
