"""The knowledge base: learnings, drafts, their review through git, staleness.

`Lorebook.learnings` returns the facade (`knowledge.api.Learnings`). This package's own
import stays light; the model (pydantic) and git (`lorebook.git.repo`) load with the modules
that use them.

Core module: standard library only, see docs/architecture.md#core.
"""
