"""Git: every repository operation lorebook makes goes through this package."""
