"""A frozen copy of the redaction rules and scan (src/lorebook/redact/patterns.py and scan.py)
as they were before the per-candidate work of the token scan was bounded: the reference that
tests/test_redact_equivalence.py compares today's redaction with.  Never edit it to make a
test pass; a deliberate change of output replaces the copy in its own commit."""
