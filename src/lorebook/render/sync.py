"""The text of `lore sync`: what was committed, pulled and pushed, in a few lines."""

from __future__ import annotations

from typing import Any


def sync_text(result: dict[str, Any], *, push: bool = True) -> str:
    """Pure: the summary `lore sync` prints from `Lorebook.sync`'s result."""
    lines = []
    if result["committed"]:
        lines.append(f"committed {result['committed'][:7]}: {result['subject']}")
    upstream = result["upstream"]
    if upstream is None:
        why = "no upstream branch" if result.get("remote") else "no remote"
        lines.append(f"{why}: committed only (nothing pulled or pushed)")
        if not result["committed"]:
            lines.insert(0, "nothing to commit")
        return "\n".join(lines)
    if result["pulled"]:
        lines.append(f"pulled from {upstream}")
    if result["pushed"]:
        lines.append(f"pushed to {upstream}")
    elif not push and result["committed"]:
        lines.append("not pushed (--no-push)")
    if not lines:
        return f"nothing to commit, nothing to pull: up to date with {upstream}"
    return "\n".join(lines)
