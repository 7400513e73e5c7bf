"""Regenerate the SVG screenshots of docs/tui.md from a fresh `lore demo` store.

    PYTHONPATH=src .venv/bin/python docs/tui/screenshots.py
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

from lorebook import Lorebook
from lorebook.tui.app import TABS, make_app

OUT = Path(__file__).resolve().parent


async def shoot(store: Path) -> None:
    app = make_app(Lorebook.open(store), load_model=False)
    async with app.run_test(size=(100, 30)) as pilot:
        app.sub_title = "lore demo"
        for n, (tab, _label) in enumerate(TABS, 1):
            await pilot.press(str(n))
            if tab == "learnings":
                await pilot.press("slash", *"refresh token", "enter")
            await pilot.pause(1.0)
            app.save_screenshot(f"{n}-{tab}.svg", path=str(OUT))
        await pilot.press("1", "enter")
        await pilot.pause(0.5)
        app.save_screenshot("1-timeline.svg", path=str(OUT))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "demo"
        subprocess.run([sys.executable, "-m", "lorebook", "demo", str(store)], check=True,
                       capture_output=True)
        asyncio.run(shoot(store))


if __name__ == "__main__":
    main()
