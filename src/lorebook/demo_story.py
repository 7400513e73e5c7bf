"""The scripted sessions of `lore demo`, written through the public API with backdated times."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from .book import Lorebook, Session

Commit = Callable[[str, datetime], str]
Write = Callable[[str, str], None]


class Clock:
    """Advances a backdated 'now' between the steps of a session."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def tick(self, minutes: float) -> datetime:
        self.now += timedelta(minutes=minutes)
        return self.now


def _rate_limit_session(book: Lorebook, clock: Clock, commit: Commit, write: Write) -> None:
    s = book.start_session(agent="PS", project="consilio", now=clock.now)
    s.log(
        "plan",
        epic="epic-011",
        now=clock.tick(3),
        context={
            "epic_id": "epic-011",
            "approach": "Token bucket per API key in Redis",
            "decisions": ["120 requests/minute", "429 with Retry-After"],
        },
    )
    s.log("search", now=clock.tick(1), context={"query": "rate limiting redis", "results": 2})
    spawn = s.log(
        "spawn",
        outcome="in_progress",
        epic="epic-011",
        now=clock.tick(1),
        context={
            "subagent_type": "implementation",
            "model": "haiku",
            "agent_id": "impl-7f3a",
            "task_description": "Implement token-bucket rate limiting",
        },
    )
    write("src/api/ratelimit.py", "LIMIT_PER_MINUTE = 120\nBURST = 20\n")
    s.log(
        "spawn",
        parent=spawn["id"],
        epic="epic-011",
        duration_s=1320,
        now=clock.tick(22),
        context={"agent_id": "impl-7f3a", "subagent_type": "implementation"},
    )
    sha = commit("feat(api): token-bucket rate limiting (epic-011)", clock.tick(2))
    s.log(
        "commit",
        epic="epic-011",
        now=clock.now,
        context={
            "files": ["src/api/ratelimit.py"],
            "message": "feat(api): token-bucket rate limiting",
            "branch": "main",
            "commit_hash": sha,
        },
    )
    s.log(
        "validate",
        epic="epic-011",
        now=clock.tick(6),
        context={
            "epic_id": "epic-011",
            "validation_type": "acceptance_criteria",
            "passed": True,
            "failures": [],
        },
    )
    s.log(
        "deploy",
        outcome="failure",
        epic="epic-011",
        now=clock.tick(4),
        error="container exited: address already in use (port 5000)",
        context={
            "service": "consilio-api",
            "port": 5000,
            "type": "docker",
            "health_check_url": "http://localhost:5000/health",
        },
    )
    s.log(
        "tool_call",
        now=clock.tick(1),
        context={
            "tool_name": "mcp_meta_allocate_port",
            "params": {"service": "consilio-api"},
            "result": {"success": True, "port": 5012},
            "command": "export REGISTRY_TOKEN=ghp_4f9Qz8LmN2pR7sT1uV3wX5yZ6aB8cD0eF2gH ./deploy.sh",
        },
    )
    s.log(
        "deploy",
        epic="epic-011",
        duration_s=48,
        now=clock.tick(3),
        context={
            "service": "consilio-api",
            "port": 5012,
            "type": "docker",
            "deployment_status": "success",
        },
    )
    s.log("epic_complete", epic="epic-011", now=clock.tick(1), context={"title": "Rate limiting"})
    book.end_session(s.id, reason="normal", agent=s.agent, project=s.project, now=clock.tick(1))


def _auth_planning_session(book: Lorebook, clock: Clock, commit: Commit, write: Write) -> None:
    s = book.start_session(agent="PS", project="consilio", now=clock.now)
    s.log(
        "plan",
        epic="epic-012",
        now=clock.tick(5),
        context={
            "epic_id": "epic-012",
            "approach": "JWT with httpOnly cookies and refresh-token rotation",
            "learnings_consulted": ["rls-policy-blocks-insert"],
            "decisions": ["RS256", "15 minute access tokens", "rotate refresh tokens"],
        },
    )
    spawn = s.log(
        "spawn",
        outcome="in_progress",
        epic="epic-012",
        now=clock.tick(2),
        context={
            "subagent_type": "implementation",
            "model": "sonnet",
            "agent_id": "impl-2b9c",
            "task_description": "Implement JWT login and access tokens",
        },
    )
    write("src/auth/jwt.py", "ALGORITHM = 'RS256'\nACCESS_TTL_MINUTES = 15\nISSUER = 'consilio'\n")
    s.log(
        "spawn",
        parent=spawn["id"],
        epic="epic-012",
        duration_s=2400,
        now=clock.tick(40),
        context={"agent_id": "impl-2b9c", "subagent_type": "implementation"},
    )
    sha = commit("feat(auth): JWT login with RS256 access tokens (epic-012)", clock.tick(2))
    s.log(
        "commit",
        epic="epic-012",
        now=clock.now,
        context={
            "files": ["src/auth/jwt.py"],
            "message": "feat(auth): JWT login with RS256 access tokens",
            "branch": "main",
            "commit_hash": sha,
        },
    )
    s.log(
        "validate",
        epic="epic-012",
        now=clock.tick(5),
        context={
            "epic_id": "epic-012",
            "validation_type": "unit_tests",
            "passed": True,
            "failures": [],
        },
    )
    book.end_session(s.id, reason="normal", agent=s.agent, project=s.project, now=clock.tick(1))


def _ms_session(book: Lorebook, clock: Clock) -> None:
    s = book.start_session(agent="MS", project="consilio", now=clock.now)
    s.log(
        "tool_call",
        now=clock.tick(2),
        context={"tool_name": "mcp_meta_health_check", "result": {"services": 4, "unhealthy": 0}},
    )
    s.log("search", now=clock.tick(1), context={"query": "deploy port conflict", "results": 1})
    book.end_session(s.id, reason="normal", agent=s.agent, project=s.project, now=clock.tick(1))


def _disconnected_session(book: Lorebook, clock: Clock, commit: Commit, write: Write) -> Session:
    s = book.start_session(agent="PS", project="consilio", now=clock.now)
    s.log(
        "plan",
        epic="epic-012",
        now=clock.tick(4),
        context={
            "epic_id": "epic-012",
            "approach": "Rotate refresh tokens on every use",
            "decisions": ["token family id", "revoke family on reuse"],
        },
    )
    spawn = s.log(
        "spawn",
        outcome="in_progress",
        epic="epic-012",
        now=clock.tick(2),
        context={
            "subagent_type": "implementation",
            "model": "sonnet",
            "agent_id": "impl-xyz789",
            "task_description": "Implement refresh-token rotation",
        },
    )
    write("src/auth/tokens.py", "def rotate(refresh_token):\n    return issue_new(refresh_token)\n")
    s.log(
        "spawn",
        parent=spawn["id"],
        epic="epic-012",
        duration_s=1800,
        now=clock.tick(30),
        context={"agent_id": "impl-xyz789", "subagent_type": "implementation"},
    )
    sha = commit("feat(auth): refresh-token rotation (epic-012)", clock.tick(2))
    s.log(
        "commit",
        epic="epic-012",
        now=clock.now,
        context={
            "files": ["src/auth/tokens.py"],
            "message": "feat(auth): refresh-token rotation",
            "branch": "main",
            "commit_hash": sha,
        },
    )
    s.log(
        "validate",
        outcome="failure",
        epic="epic-012",
        now=clock.tick(6),
        error="2 of 7 acceptance criteria failed",
        context={
            "epic_id": "epic-012",
            "validation_type": "acceptance_criteria",
            "passed": False,
            "failures": [
                "refresh token reuse is not detected",
                "logout does not revoke the refresh token",
            ],
        },
    )
    s.log(
        "spawn",
        outcome="in_progress",
        epic="epic-012",
        now=clock.tick(2),
        context={
            "subagent_type": "fix",
            "model": "sonnet",
            "agent_id": "fix-42",
            "task_description": "Detect refresh-token reuse and revoke on logout",
        },
    )
    write(
        "src/auth/tokens.py",
        "def rotate(refresh_token):\n    check_family(refresh_token)  # WIP\n"
        "    return issue_new(refresh_token)\n",
    )
    return s  # no end event: the connection dropped here


def play(book: Lorebook, now: datetime, commit: Commit, write: Write) -> None:
    """Write the four sessions, committing code and shards as a team would."""
    day3 = (now - timedelta(days=3)).replace(hour=9, minute=30, second=0, microsecond=0)
    _rate_limit_session(book, Clock(day3), commit, write)
    commit("lore: action log for epic-011", day3 + timedelta(hours=2))
    day2 = (now - timedelta(days=2)).replace(hour=10, minute=0, second=0, microsecond=0)
    _auth_planning_session(book, Clock(day2), commit, write)
    _ms_session(book, Clock(day2 + timedelta(hours=3)))
    commit("lore: action log", day2 + timedelta(hours=4))
    _disconnected_session(book, Clock(now - timedelta(hours=2)), commit, write)
