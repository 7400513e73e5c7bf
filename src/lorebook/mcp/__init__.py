"""`lore mcp`: lorebook's tools over the Model Context Protocol (stdio), a thin skin over
`Lorebook`. Imported only by the launcher when `lore mcp` runs (it loads the `mcp` SDK)."""
