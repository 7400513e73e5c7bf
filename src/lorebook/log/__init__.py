"""The action log: appending, reading, the catalog, sessions, resume and reports.

Core module: standard library only, see docs/architecture.md#core.
"""
