"""The frame for text handed to an agent, for the skins (hooks, CLI, MCP).

The one implementation is `lorebook.framing.frame_data`: it sits below the facade so that
the preflight block, built there, is framed by the same function.

Core module: standard library only, see docs/architecture.md#core.
"""

from __future__ import annotations

from ..framing import CLOSE, FRAME_CHARS, NOTICE, OPEN, frame_data, neutralise

__all__ = ["CLOSE", "FRAME_CHARS", "NOTICE", "OPEN", "frame_data", "neutralise"]
