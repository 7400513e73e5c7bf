-- lorebook mirror, schema version 1: seed 000's action log tables (Part B, "1. Database
-- Schema") plus a `repository` column on every table, so many repositories share one database,
-- and lorebook's own tables (learnings, applications, the per-shard watermark).
--
-- What differs from the seed, and why:
-- * every table has `repository` (lorebook's repository identity, stable across clones) and
--   its primary key is (repository, id): two repositories may hold the same ids;
-- * `id` / `parent_action_id` are TEXT: lorebook's ids are ULIDs written by the agents, not
--   UUIDs made by the server (so no uuid-ossp extension); the parent is no foreign key
--   because a child may be mirrored before its parent (another shard, a later batch);
-- * VARCHAR(n) limits are TEXT: agent names, projects and action types are free words in
--   lorebook and may be longer than the seed's limits;
-- * `duration_seconds` is double precision (the log keeps fractions of a second);
-- * the seed's indexes get IF NOT EXISTS and lead with `repository`;
-- * the seed's helper functions (get_session_actions, get_last_session) qualify their columns: as written, their RETURNS TABLE
--   names (`action_type`, `timestamp`, ...) are ambiguous with the table's columns, and
--   PostgreSQL 15 refuses to run them ("column reference ... is ambiguous"); they take the
--   repository as an optional first filter.

CREATE TABLE IF NOT EXISTS supervisor_actions (
  repository TEXT NOT NULL,
  id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  supervisor_type TEXT NOT NULL,
  project TEXT,
  action_type TEXT NOT NULL,
  action_category TEXT,
  context JSONB NOT NULL DEFAULT '{}',
  outcome TEXT NOT NULL DEFAULT 'success',
  error_message TEXT,
  duration_seconds DOUBLE PRECISION,
  timestamp TIMESTAMP WITH TIME ZONE NOT NULL,
  metadata JSONB DEFAULT '{}',
  parent_action_id TEXT,
  related_epic_id TEXT,
  related_issue_id TEXT,
  PRIMARY KEY (repository, id)
);
CREATE INDEX IF NOT EXISTS idx_supervisor_actions_session_id
  ON supervisor_actions(repository, session_id);
CREATE INDEX IF NOT EXISTS idx_supervisor_actions_type ON supervisor_actions(action_type);
CREATE INDEX IF NOT EXISTS idx_supervisor_actions_supervisor_type
  ON supervisor_actions(supervisor_type);
CREATE INDEX IF NOT EXISTS idx_supervisor_actions_project ON supervisor_actions(project);
CREATE INDEX IF NOT EXISTS idx_supervisor_actions_timestamp
  ON supervisor_actions(timestamp DESC);
CREATE INDEX IF NOT EXISTS idx_supervisor_actions_outcome ON supervisor_actions(outcome);
CREATE INDEX IF NOT EXISTS idx_supervisor_actions_epic ON supervisor_actions(related_epic_id);
CREATE INDEX IF NOT EXISTS idx_supervisor_actions_context
  ON supervisor_actions USING GIN(context);

CREATE TABLE IF NOT EXISTS supervisor_sessions (
  repository TEXT NOT NULL,
  session_id TEXT NOT NULL,
  supervisor_type TEXT NOT NULL,
  project TEXT,
  started_at TIMESTAMP WITH TIME ZONE,
  last_activity TIMESTAMP WITH TIME ZONE,
  ended_at TIMESTAMP WITH TIME ZONE,
  session_type TEXT NOT NULL,
  disconnect_reason TEXT,
  total_actions INTEGER DEFAULT 0,
  metadata JSONB DEFAULT '{}',
  PRIMARY KEY (repository, session_id)
);
CREATE INDEX IF NOT EXISTS idx_supervisor_sessions_project ON supervisor_sessions(project);
CREATE INDEX IF NOT EXISTS idx_supervisor_sessions_started_at
  ON supervisor_sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_supervisor_sessions_last_activity
  ON supervisor_sessions(last_activity DESC);

-- learnings (learnings/*.md, drafts included): mutable, replaced on every mirror
CREATE TABLE IF NOT EXISTS lorebook_learnings (
  repository TEXT NOT NULL,
  id TEXT NOT NULL,
  title TEXT NOT NULL,
  kind TEXT NOT NULL,
  category TEXT,
  severity TEXT,
  status TEXT NOT NULL,
  tags TEXT[] NOT NULL DEFAULT '{}',
  created DATE,
  PRIMARY KEY (repository, id)
);

-- applications: one row per `apply_learning` (`lore apply`) or `occurrence` (`lore pattern
-- record`) action, naming the learning it is about and whether it worked
CREATE TABLE IF NOT EXISTS lorebook_applications (
  repository TEXT NOT NULL,
  action_id TEXT NOT NULL,
  learning_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  solution TEXT,
  outcome TEXT NOT NULL,
  timestamp TIMESTAMP WITH TIME ZONE NOT NULL,
  session_id TEXT NOT NULL,
  related_epic_id TEXT,
  parent_action_id TEXT,
  PRIMARY KEY (repository, action_id)
);
CREATE INDEX IF NOT EXISTS idx_lorebook_applications_learning
  ON lorebook_applications(repository, learning_id);

-- the watermark: how far each shard of each repository was stored (bytes up to the last
-- complete line), moved in the transaction that stores its rows
CREATE TABLE IF NOT EXISTS lorebook_shards (
  repository TEXT NOT NULL,
  path TEXT NOT NULL,
  offset_bytes BIGINT NOT NULL,
  lines BIGINT NOT NULL,
  tail_hash TEXT NOT NULL,
  mirrored_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
  PRIMARY KEY (repository, path)
);

CREATE TABLE IF NOT EXISTS lorebook_repositories (
  repository TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  last_mirror TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
);

CREATE OR REPLACE FUNCTION get_session_actions(
  p_session_id TEXT,
  p_limit INTEGER DEFAULT 50,
  p_repository TEXT DEFAULT NULL
)
RETURNS TABLE (
  action_id TEXT,
  action_type TEXT,
  context JSONB,
  outcome TEXT,
  "timestamp" TIMESTAMP WITH TIME ZONE
) AS $$
BEGIN
  RETURN QUERY
  SELECT sa.id, sa.action_type, sa.context, sa.outcome, sa.timestamp
  FROM supervisor_actions sa
  WHERE sa.session_id = p_session_id
    AND (p_repository IS NULL OR sa.repository = p_repository)
  ORDER BY sa.timestamp DESC
  LIMIT p_limit;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION get_last_session(
  p_project TEXT,
  p_supervisor_type TEXT DEFAULT 'PS',
  p_repository TEXT DEFAULT NULL
)
RETURNS TABLE (
  session_id TEXT,
  last_activity TIMESTAMP WITH TIME ZONE,
  total_actions INTEGER,
  last_action_type TEXT,
  last_action_context JSONB
) AS $$
BEGIN
  RETURN QUERY
  SELECT ss.session_id, ss.last_activity, ss.total_actions, sa.action_type, sa.context
  FROM supervisor_sessions ss
  LEFT JOIN LATERAL (
    SELECT a.action_type, a.context
    FROM supervisor_actions a
    WHERE a.repository = ss.repository AND a.session_id = ss.session_id
    ORDER BY a.timestamp DESC
    LIMIT 1
  ) sa ON true
  WHERE ss.project = p_project
    AND ss.supervisor_type = p_supervisor_type
    AND (p_repository IS NULL OR ss.repository = p_repository)
  ORDER BY ss.last_activity DESC
  LIMIT 1;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE VIEW supervisor_activity_summary AS
SELECT
  repository,
  DATE(timestamp) AS activity_date,
  supervisor_type,
  project,
  action_type,
  outcome,
  COUNT(*) AS action_count,
  AVG(duration_seconds) AS avg_duration_seconds
FROM supervisor_actions
GROUP BY repository, DATE(timestamp), supervisor_type, project, action_type, outcome
ORDER BY activity_date DESC, action_count DESC;
