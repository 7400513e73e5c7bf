"""Org scale: the store mirrored into systems an organisation already runs (PostgreSQL).

The files stay the truth; a mirror is incremental (a watermark per shard kept in the target)
and idempotent (keys per repository). Nothing here runs in a hook or on the append path.
"""
