-- lorebook mirror, schema version 3: a repository's learnings are sent only when they changed.
-- `learnings_digest` hashes what decides their rows (the learning and draft files, the
-- redaction settings and the code that makes a row of a file; see lorebook.mirror.learnings)
-- and `learnings_count` the rows sent with it; a mirror whose digest and count match leaves
-- the rows as they are. NULL (every repository mirrored before this version): sent again.
ALTER TABLE lorebook_repositories ADD COLUMN IF NOT EXISTS learnings_digest TEXT;
ALTER TABLE lorebook_repositories ADD COLUMN IF NOT EXISTS learnings_count INTEGER NOT NULL DEFAULT 0;
