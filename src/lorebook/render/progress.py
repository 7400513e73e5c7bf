"""One status line for long work reported through `lorebook.progress`: a bar with counts for
work that counts (files, shards), the label and the time spent for a single long step.

Pure: the terminal writer (the CLI) measures the width and the time and redraws the line.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

# task -> (label, what it counts); an unknown task shows its own name
LABELS: dict[str, tuple[str, str]] = {
    "model.export": ("Exporting the embedding model to ONNX (once per model)", ""),
    "model.load": ("Loading the embedding model", ""),
    "index.build": ("Indexing learnings", "files"),
    "catalog.build": ("Building the action catalog", ""),  # shards, then its indexes
    "catalog.check": ("Checking the action catalog", "shards"),
    "import.sessions": ("Importing sessions", "files"),
}
BAR_MIN = 10  # narrower than this, the bar is left out
BAR_MAX = 30
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def elapsed_text(seconds: float) -> str:
    """`3s`, `1m05s`: whole seconds, enough for work that takes seconds to minutes."""
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole}s"
    return f"{whole // 60}m{whole % 60:02d}s"


def progress_line(
    task: str, done: int, total: int, elapsed: float, *, width: int = 80, color: bool = False
) -> str:
    """The status line for `task` at `done` of `total`, at most `width - 1` visible characters
    (the last column would wrap on some terminals). No newline, no cursor movement."""
    label, unit = LABELS.get(task, (task, ""))
    spent = elapsed_text(elapsed)
    room = max(width - 1, 1)
    if total <= 1:  # one step: no count worth showing
        text = f"{label}… {spent}"
        if len(text) > room:
            text = label[: max(room - len(spent) - 2, 0)] + f"… {spent}"
        if not color or len(text) > room:
            return text[:room]
        return f"{_BOLD}{label}…{_RESET} {_DIM}{spent}{_RESET}"
    done = min(max(done, 0), total)
    percent = f"{done * 100 // total:3d}%"
    counts = f"{done:,}/{total:,}" + (f" {unit}" if unit else "")
    tail = f" {percent} {counts} {spent}"
    bar_room = room - len(label) - len(tail) - 3  # " [" and "]"
    if bar_room >= BAR_MIN:
        cells = min(bar_room, BAR_MAX)
        filled = cells * done // total
        bar = "#" * filled + "-" * (cells - filled)
        if color:
            return f"{_BOLD}{label}{_RESET} [{bar}] {percent} {_DIM}{counts} {spent}{_RESET}"
        return f"{label} [{bar}]{tail}"
    text = f"{label}{tail}"
    if len(text) > room:
        text = _clip(label, room - len(tail)) + tail
    return text[:room]


def _clip(text: str, room: int) -> str:
    if room <= 1:
        return ""
    return text if len(text) <= room else text[: room - 1] + "…"


def progress_status(task: str, done: int, total: int) -> str:
    """A short phrase for a status bar that is not redrawn every second (the TUI)."""
    label, unit = LABELS.get(task, (task, ""))
    if total <= 1:
        return f"{label}…"
    return f"{label} {min(max(done, 0), total):,}/{total:,}" + (f" {unit}" if unit else "")
