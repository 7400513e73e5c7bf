"""`lore import claude|codex`: the sessions a client already wrote to its own files, replayed
through the hooks' own handlers (same records, same redaction) at the times they happened.

`claude` and `codex` read each client's files into `Transcript`s of hook events (`events`);
`run` finds the files, skips what the log already holds and fires the handlers; `command` is
the `lore import` entry.
"""
