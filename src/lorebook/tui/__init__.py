"""`lore tui`: a Textual app over one store. A skin: it reads through `Lorebook` and formats
with `lorebook.render`; `app.make_app(book)` builds it for the command and for the tests."""
