"""`lore demo`: a realistic sample store in a fresh git repository.

Four sessions over four days of a supervisor agent ("PS") building JWT authentication for the
"consilio" project; the last one disconnected mid-epic after a failed validation while a fix
subagent was still running. Also learnings (one made stale by a later commit to the code it
is anchored to), a draft awaiting review, expertise files (one written by hand, one learned from
the finished rate-limiting session) and real git history.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from .book import Lorebook
from .errors import LoreError
from .git.binary import commit_all, head, init_repository, set_identity
from .init import create_store
from .timeutil import utcnow

PROJECT = "consilio"

APP_FILES = {
    "README.md": "# consilio\n\nCase management API.\n",
    "src/api/app.py": "from fastapi import FastAPI\n\napp = FastAPI()\n",
    "src/api/ratelimit.py": "LIMIT_PER_MINUTE = 120\n",
    "src/auth/jwt.py": "ALGORITHM = 'RS256'\nACCESS_TTL_MINUTES = 15\n",
    "src/auth/tokens.py": "def rotate(refresh_token):\n    raise NotImplementedError\n",
    "tests/test_auth.py": "def test_login():\n    assert True\n",
    "supabase/policies.sql": "create policy owner_insert on cases for insert\n"
    "  with check (auth.uid() = owner_id);\n",
    "deploy/compose.yaml": "services:\n  api:\n    ports: ['${API_PORT}:8000']\n",
}

LEARNINGS = {
    "rls-policy-blocks-insert": """\
---
id: {date}-rls-policy-blocks-insert
title: RLS policy blocks INSERT with the anon key
kind: pattern
category: database
severity: high
tags: [rls, supabase, postgres]
status: published
created: {date}
source: {{epic: epic-009, issue: null, session: null}}
anchors: [supabase/policies.sql]
supersedes: []
solutions:
  - id: s1
    text: Use the service-role key for admin mutations, never the anon key
prevention: [Check RLS policies before using the anon key for mutations]
---
## Problem
Inserts from the admin job failed with "new row violates row-level security policy".

## Root Cause
The job used the anon key; the table's RLS policy only allows INSERT for authenticated owners.

## Solution
Admin mutations use the service-role key from the server environment.

## Key Takeaway
Row level security applies to every key except service-role: pick the key per operation.
""",
    "port-conflict-on-deploy": """\
---
id: {date}-port-conflict-on-deploy
title: Deploy failed because port 5000 was already allocated
kind: rca
category: deployment
severity: medium
tags: [deploy, ports]
status: published
created: {date}
source: {{epic: epic-011, issue: null, session: null}}
anchors: [deploy/compose.yaml]
supersedes: []
prevention: [Allocate ports through the port registry instead of hard-coding them]
---
## Problem
The API container exited at start: address already in use.

## Root Cause
A stale preview container kept port 5000; the deploy script hard-coded the port.

## Solution
Ask the port registry for a free port and pass it to the container.

## Key Takeaway
Never hard-code service ports in deploy scripts.
""",
    "refresh-tokens-single-use": """\
---
id: {date}-refresh-tokens-single-use
title: A refresh token must be single-use
kind: lesson
category: security
severity: high
tags: [jwt, auth, refresh-token]
status: published
created: {date}
source: {{epic: epic-010, issue: null, session: null}}
anchors: ['src/auth/tokens.py#rotate']
supersedes: []
prevention: [Test that a used refresh token is refused before shipping rotation]
---
## Problem
A stolen refresh token kept working after the user had refreshed.

## Root Cause
Refreshing issued a new access token but left the old refresh token valid.

## Solution
`rotate()` invalidates the presented refresh token and issues a new one.

## Key Takeaway
Accept each refresh token once; every refresh spends it.
""",
}

DRAFT = """\
---
id: {date}-refresh-token-reuse-detection
title: Refresh-token rotation must detect reuse
kind: lesson
category: security
severity: high
tags: [jwt, auth, refresh-token]
status: draft
created: {date}
source: {{epic: epic-012, issue: null, session: null}}
anchors: [src/auth/tokens.py]
supersedes: []
---
## Problem
Validation of epic-012 failed: a refresh token could be used twice.

## Root Cause
Rotation issued a new token without revoking the old token family.

## Solution
Store a token family id; on reuse revoke the whole family.

## Key Takeaway
Rotation without reuse detection is not rotation.
"""

EXPERTISE = """\
# Security expertise for consilio: read before touching auth.
domain: security
overview: JWT access tokens (RS256, 15 min) with rotating refresh tokens; secrets come from env.
core_files:
  - src/auth/jwt.py
  - src/auth/tokens.py
patterns:
  - name: token-family
    description: Refresh tokens carry a family id so reuse revokes the whole family
best_practices:
  - Never log tokens; lorebook redacts them, but do not rely on it
  - Keep access tokens short-lived (15 minutes)
learned_from_failures:
  - issue: refresh token accepted twice
    error: "validation: refresh token reuse not detected"
    solution: revoke the token family on reuse
    sessions: []
    timestamp: "{ts}"
effective_patterns:
  - Read -> Edit -> test for auth changes
successful_techniques:
  - Write the reuse test before the rotation code
last_validated: "{ts}"
"""


AUTHOR = ("Demo Agent", "agent@consilio.invalid")


def _commit(root: Path, message: str, when: datetime) -> str:
    commit_all(root, message, author=AUTHOR, when=when)
    return head(root, short=True) or ""


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def prepare(directory: Path) -> None:
    """Refuse a directory that holds anything already: the demo never overwrites work."""
    if directory.exists():
        if not directory.is_dir():
            raise LoreError("{} exists and is not a directory", directory)
        if any(directory.iterdir()):
            raise LoreError("{} is not empty: choose a new directory for the demo", directory)
    directory.mkdir(parents=True, exist_ok=True)


def build_demo(directory: Path, now: datetime | None = None) -> Lorebook:
    """Create the sample repository and store in `directory` (which must be new or empty)."""
    from .demo_story import play

    now = now or utcnow()
    prepare(directory)
    init_repository(directory, branch="main")
    for rel, text in APP_FILES.items():
        _write(directory, rel, text)
    create_store(directory)
    start = (now - timedelta(days=3)).replace(hour=9, minute=0, second=0, microsecond=0)
    _commit(directory, "chore: scaffold consilio API and lorebook store", start)
    book = Lorebook.open(directory, env={})
    book.install_subscribers()  # the story's epic_complete drafts a learning, as `lore log` would
    day = start.strftime("%Y-%m-%d")
    for name, text in LEARNINGS.items():
        _write(directory, f"learnings/{day}-{name}.md", text.format(date=day))
    stamp = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    _write(directory, ".expertise/security.yaml", EXPERTISE.format(ts=stamp))
    _commit(directory, "docs: lessons from epic-009 and epic-011", start + timedelta(minutes=5))
    play(
        book,
        now,
        lambda message, when: _commit(directory, message, when),
        lambda rel, text: _write(directory, rel, text),
    )
    today = now.strftime("%Y-%m-%d")
    _write(
        directory,
        f"learnings/drafts/{today}-refresh-token-reuse-detection.md",
        DRAFT.format(date=today),
    )
    return book


def learn_expertise(book: Lorebook) -> dict[str, Any]:
    """ACT -> LEARN: the finished rate-limiting session updates (and commits) its domain's file."""
    set_identity(book.root, *AUTHOR)
    finished = book.actions(type="epic_complete", limit=1)[0]["session"]
    return book.expertise.learn(finished)


SEARCH_QUERY = "row level security stops inserts"
PREFLIGHT_TASK = "deploy the api service"


def search_demo(book: Lorebook) -> dict[str, Any]:
    """Search (the RLS lesson found without the word RLS) and a deploy preflight."""
    hits = book.index.search(SEARCH_QUERY, limit=3)
    return {
        "search": {"query": SEARCH_QUERY, "results": [h.to_dict() for h in hits]},
        # not logged: the sample's action log tells its own story (see `lore resume`)
        "preflight": book.preflight(PREFLIGHT_TASK, phase="deploy", limit=3, log=False),
    }


def demo_summary(book: Lorebook, expertise: dict[str, Any] | None = None) -> dict[str, Any]:
    """What `lore demo` shows: the sessions, the resume brief's data, what expertise learned,
    the learnings (drafts awaiting review, learnings whose code changed since) and a week's
    activity report."""
    from .log.report import build_report, resolve_window

    window = resolve_window(days=7, since=None, until=None, now=utcnow())
    return {
        "root": str(book.root),
        "sessions": [s.to_dict() for s in book.sessions()],
        "resume": book.resume(project=PROJECT),
        "expertise": expertise,
        "learnings": [x.to_dict() for x in book.learnings.query(status="published")],
        "drafts": [x.to_dict() for x in book.learnings.drafts()],
        "stale": [r.to_dict() for r in book.learnings.stale()],
        "report": build_report(book.action_log, window, group_by="type"),
    }


def run_demo(directory: Path) -> dict[str, Any]:
    """Build the sample in `directory`, learn from its finished session, search it: all that
    `lore demo` shows."""
    book = build_demo(directory)
    summary = demo_summary(book, learn_expertise(book))
    summary.update(search_demo(book))
    return summary
