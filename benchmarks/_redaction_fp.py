"""What each redaction marker in a replayed session's records replaced, and whether it held a
secret: the false-positive measure of `replay_sessions.py`.

Every string of every hook payload is kept (`Sources`); a stored field's marker is matched
back to the payload text it replaced (the text before the marker, then the text after it),
and the original is classified:

* `api_id`  - an Anthropic API id (`toolu_01…`, `msg_01…`, `req_01…`);
* `id`      - a UUID, ULID, hex digest or git hash (maybe after a lower-case prefix);
* `path`    - inside a file path (a hash or a temp folder's name between slashes);
* `code`    - source code under a secret-looking name: `sessionID: state.SessionID`,
              `token := cfg.Token`, a template placeholder;
* `pii`     - an email, phone, card or SSN: redacted by policy (docs/redaction.md), so not a
              false positive, but counted;
* `secret`  - anything else: what a secret looks like, kept as a true positive;
* `unknown` - the original could not be found (a value the hook rewrote).

False positives are the markers of the first four classes (and a field counts once).
"""

from __future__ import annotations

import re
from typing import Any

MARKER = re.compile(r"\[REDACTED(?::([a-z_]+))?\]")
TRUNCATED = re.compile(r"…\[TRUNCATED [0-9]+ chars\]\Z")
API_ID = re.compile(r"(?:toolu|srvtoolu|msg|msgbatch|req|file|env)_01[1-9A-HJ-NP-Za-km-z]{22}")
ID = re.compile(
    r"(?:[0-9a-z][0-9a-z\-]{0,31}[-_])?"
    r"(?:[0-9A-HJKMNP-TV-Z]{26}|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
    r"|[0-9a-f]{7,128})"
)
# an expression in source code: a.b.C, f(x), = expr, a template or a variable
CODE = re.compile(
    r"(?:[:=]=?\s*)?[`'\"]?\s*(?:[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
    r"(?:\(.*\))?|[+`\"' ]+.*[+`\"' ]+|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)[,;)]?"
)
PII = frozenset({"email", "phone", "credit_card", "ssn"})
FALSE = ("api_id", "id", "path", "code")
ANCHOR = 32
SEP = "\x00"


class Sources:
    """The strings of every payload sent, joined (for the search) and by key."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.by_key: dict[str, set[str]] = {}
        self._text = ""
        self._joined = -1  # how many parts _text holds

    def add(self, value: Any, key: str = "") -> None:
        if isinstance(value, str):
            self.parts.append(value)
            self.by_key.setdefault(key, set()).add(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                self.add(v, str(k))
        elif isinstance(value, list):
            for v in value:
                self.add(v, key)

    def text(self) -> str:
        if self._joined != len(self.parts):
            self._text = SEP + SEP.join(self.parts) + SEP
            self._joined = len(self.parts)
        return self._text


def classify(kind: str, original: str | None, before: str, after: str) -> str:
    """The class of one redacted span (see the module's docstring)."""
    if kind in PII:
        return "pii"
    if original is None:
        return "unknown"
    value = original.strip().strip("\"'`")
    if API_ID.fullmatch(value):
        return "api_id"
    if ID.fullmatch(value):
        return "id"
    if before.endswith("/") or after.startswith("/") or "/" in value:
        return "path"
    if (
        kind in ("secret_assignment", "secret")
        and CODE.fullmatch(original.strip())
        and (not any(c.isdigit() for c in value) or "." in value or "(" in value)
    ):
        return "code"
    return "secret"


def _original(text: str, before: str, after: str) -> str | None:
    """The payload text between `before` and `after` (either may be empty)."""
    anchor, tail = before[-ANCHOR:], after[:ANCHOR]
    if anchor:
        i = text.find(anchor)
        while i >= 0:
            start = i + len(anchor)
            stop = text.find(SEP, start)
            end = text.find(tail, start, stop) if tail else stop
            if end > start:
                return text[start:end]
            i = text.find(anchor, i + 1)
        return None
    if tail:
        j = text.find(tail)
        while j >= 0:
            start = text.rfind(SEP, 0, j) + 1
            if j > start:
                return text[start:j]
            j = text.find(tail, j + 1)
    return None


def spans(field: str, key: str, sources: Sources) -> list[str]:
    """The class of each marker in stored string `field` (under `key`)."""
    body = TRUNCATED.sub("", field)
    markers = list(MARKER.finditer(body))
    if not markers:
        return []
    if len(markers) == 1 and markers[0].group() == body:  # the whole value
        kind = markers[0].group(1) or "secret"
        classes = {classify(kind, v, "", "") for v in sources.by_key.get(key, ())}
        return [classes.pop() if len(classes) == 1 else "unknown"]
    text = sources.text()
    out = []
    for n, m in enumerate(markers):
        before = body[markers[n - 1].end() if n else 0 : m.start()]
        after = body[m.end() : markers[n + 1].start() if n + 1 < len(markers) else len(body)]
        original = _original(text, before, after)
        out.append(classify(m.group(1) or "secret", original, before, after))
    return out
