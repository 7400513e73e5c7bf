"""Which issue or epic a session works on, as a branch name or a prompt names it.

Pure functions, standard library only (the hooks call them). Deliberately narrow: a wrong
guess in a brief misleads more than a missing one, so only unmistakable shapes count --
`#42`, `issue 42`, `gh-42`, an issue or pull-request URL, a tracker key (`PROJ-123`) -- and in a
branch name a number that leads its last part (`fix/42-login`) or follows `issue`/`gh`/`bug`.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing costs milliseconds on cold paths; mypy still sees it
if TYPE_CHECKING:
    from typing import Any

# a tracker key: 2-10 capitals/digits starting with a letter, a dash, a number (JIRA, Linear)
_KEY = r"[A-Z][A-Z0-9]{1,9}-[1-9][0-9]{0,6}"
_IN_TEXT = re.compile(
    r"(?:^|[\s(\[])#([1-9][0-9]{0,6})\b"  # "#42"
    r"|\b(?:issue|issues|ticket|bug|pr|pull request)\s+#?([1-9][0-9]{0,6})\b"  # "issue 42"
    r"|/(?:issues|pull)/([1-9][0-9]{0,6})\b"  # a GitHub/GitLab URL
    rf"|\b({_KEY})\b",
    re.IGNORECASE,
)
_KEY_RE = re.compile(rf"^{_KEY}$")
_IN_BRANCH = re.compile(
    r"(?:^|[/_-])(?:issue|issues|gh|bug)[-_/]?#?([1-9][0-9]{0,6})(?=$|[/_.-])"  # issue-42, gh-42
    r"|(?:^|/)#?([1-9][0-9]{0,6})(?=[_-][A-Za-z])"  # 42-fix-login, fix/42-login
    rf"|(?:^|[/_-])({_KEY})(?=$|[/_.-])",  # feature/PROJ-123-login
    re.IGNORECASE,
)


def _issue(number: str | None, key: str | None) -> str | None:
    if number:
        return f"#{number}"
    if key:
        upper = key.upper()
        return upper if _KEY_RE.match(upper) and not upper.startswith(("UTF-", "SHA-")) else None
    return None


def issue_in_text(text: str) -> str | None:
    """The first issue a prompt names (`#42`, `issue 42`, an issue URL, `PROJ-123`), else None.
    Tracker keys count only in capitals here: prose is full of `utf-8` and `covid-19`."""
    for match in _IN_TEXT.finditer(text[:4000]):
        number = match.group(1) or match.group(2) or match.group(3)
        key = match.group(4)
        if key and key != key.upper():
            continue
        found = _issue(number, key)
        if found:
            return found
    return None


def issue_in_branch(branch: str | None) -> str | None:
    """The issue a branch name names (`fix/42-login` → `#42`, `feature/PROJ-12-x` → `PROJ-12`);
    tracker keys in capitals only, as in prose."""
    if not branch or branch in ("main", "master", "trunk", "develop"):
        return None
    for match in _IN_BRANCH.finditer(branch[:256]):
        key = match.group(3)
        if key and key != key.upper():  # `release-2026`, `lodash-4.17`: words, not keys
            continue
        found = _issue(match.group(1) or match.group(2), key)
        if found:
            return found
    return None


def current_issue(records: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    """(issue, branch) of a session: the newest `issue` an action carries (`lore log --issue`,
    a prompt that named one), else the one its start event's branch named; the branch is
    given when it is the source."""
    start: dict[str, Any] = {}
    for record in reversed(records):
        if record.get("kind") == "action":
            issue = record.get("issue")
            if isinstance(issue, str) and issue:
                return issue, None
        elif record.get("event") == "start" and not start:
            start = record.get("meta") or {}
    issue, branch = start.get("issue"), start.get("branch")
    if isinstance(issue, str) and issue:
        return issue, branch if isinstance(branch, str) else None
    return None, None
