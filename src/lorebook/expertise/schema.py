"""The vocabulary of expertise files: domains, their keywords and file globs, the file's keys.

The keyword table is the seed's; `expertise.domains` in the config adds keywords and globs to a
built-in domain or defines a new one. Everything here is plain data and pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config_check import DOMAIN_NAME
from ..errors import LoreError, UsageError

DOMAINS = ("database", "api", "frontend", "testing", "security", "deployment", "general")
FALLBACK = "general"

# The file's keys, in the order a new file gets them.
KEYS = (
    "domain",
    "overview",
    "core_files",
    "patterns",
    "best_practices",
    "learned_from_failures",
    "effective_patterns",
    "successful_techniques",
    "last_validated",
)
LIST_KEYS = KEYS[2:8]

KEYWORDS: dict[str, tuple[str, ...]] = {
    "database": (
        "database", "schema", "migration", "sql", "postgres",
        "table", "column", "index", "query", "transaction",
    ),
    "api": (
        "api", "endpoint", "route", "rest", "graphql", "http",
        "request", "response", "json", "websocket",
    ),
    "frontend": (
        "ui", "component", "react", "vue", "angular", "frontend",
        "css", "html", "style", "button", "form", "page",
    ),
    "testing": (
        "test", "spec", "validation", "assert", "mock", "fixture",
        "pytest", "jest", "playwright", "coverage",
    ),
    "security": (
        "auth", "authentication", "authorization", "security",
        "permission", "token", "encrypt", "password", "jwt",
    ),
    "deployment": (
        "deploy", "docker", "kubernetes", "ci", "cd", "build",
        "release", "container", "pipeline", "environment",
    ),
}  # fmt: skip

# Globs (relative to the root, `**` spans directories) that `improve` scans, per domain.
GLOBS: dict[str, tuple[str, ...]] = {
    "database": ("**/migrations/**/*.sql", "**/*.sql", "**/db/**/*.py", "**/models.py"),
    "api": ("**/api/**/*.py", "**/routes/**/*", "**/*route*.py", "**/endpoints/**/*"),
    "frontend": ("**/components/**/*.tsx", "**/components/**/*.vue", "**/*.css", "**/pages/**/*"),
    "testing": ("tests/**/test_*.py", "**/conftest.py", "**/*.test.ts", "**/*.spec.ts"),
    "security": ("**/auth/**/*.py", "**/*auth*.py", "**/*secret*.py", "**/*sanitiz*.py"),
    "deployment": (
        "Dockerfile",
        "**/Dockerfile",
        "docker-compose*.yml",
        ".github/workflows/*.yml",
        "Makefile",
    ),
    "general": ("README.md", "pyproject.toml", "package.json"),
}

NAME_RE = re.compile(DOMAIN_NAME)


@dataclass(frozen=True)
class DomainTable:
    """The domains of one store: the built-in ones plus `expertise.domains` from the config."""

    keywords: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(KEYWORDS))
    globs: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(GLOBS))
    names: tuple[str, ...] = DOMAINS

    @classmethod
    def from_config(cls, extra: Mapping[str, Mapping[str, Any] | None]) -> DomainTable:
        """Merge `expertise.domains: {name: {keywords: [...], globs: [...]}}` (its types checked
        when the config was loaded) into the table."""
        keywords = dict(KEYWORDS)
        globs = dict(GLOBS)
        names = list(DOMAINS)
        for name, spec in extra.items():
            if not NAME_RE.match(name):
                raise LoreError(
                    "config expertise.domains.{}: a domain name is a lowercase word like 'mobile'",
                    name,
                )
            for key, table in (("keywords", keywords), ("globs", globs)):
                values = (spec or {}).get(key) or ()
                table[name] = tuple(dict.fromkeys((*table.get(name, ()), *values)))
            if name not in names:
                names.insert(len(names) - 1, name)  # `general` stays last
        return cls(keywords=keywords, globs=globs, names=tuple(names))


def check_name(domain: str) -> str:
    """Refuse anything that is not a plain domain word (no paths, no dots, no separators)."""
    if not isinstance(domain, str) or not NAME_RE.match(domain):
        raise UsageError(
            "domain {!r} is not a domain name: use a lowercase word like "
            "database, api or testing (letters, digits, '-', '_'; no paths)",
            domain,
        )
    return domain


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A root-relative glob as a regex: `**/` spans directories, `*` and `?` stay in one."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")
