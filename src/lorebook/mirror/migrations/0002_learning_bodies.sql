-- lorebook mirror, schema version 2: what a learning says, not only its front matter.
-- `body` is the Markdown after the front matter, `anchors` the files and symbols it is about,
-- `prevention` its steps to avoid the problem and `solutions` a pattern's proven solutions
-- ([{"id": ..., "text": ...}]); all redacted like the rest of the mirror. Rows written by
-- schema version 1 get them on the next mirror (learnings are replaced every time).
ALTER TABLE lorebook_learnings ADD COLUMN IF NOT EXISTS body TEXT NOT NULL DEFAULT '';
ALTER TABLE lorebook_learnings ADD COLUMN IF NOT EXISTS anchors TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE lorebook_learnings ADD COLUMN IF NOT EXISTS prevention TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE lorebook_learnings ADD COLUMN IF NOT EXISTS solutions JSONB NOT NULL DEFAULT '[]';
