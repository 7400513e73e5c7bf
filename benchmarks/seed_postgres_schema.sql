-- The PostgreSQL schema of the design lorebook replaces (seed 000, "Feature Request: Learning
-- System + Action Database"), used by benchmarks/bench_vs_postgres.py.
--
-- Everything below the marked line is copied verbatim from the seed's section
-- "Part B: Action Log Database (New System)" -> "1. Database Schema": the block under
-- "New Tables:" (tables and indexes) and the block under "Helper Functions:" (functions and
-- the activity view). Do not edit it: the benchmark measures the seed's design as written.
--
-- Not in the seed, needed to run it: `uuid_generate_v4()` (the default of
-- supervisor_actions.id) comes from the uuid-ossp extension, shipped with PostgreSQL.
CREATE EXTENSION IF NOT EXISTS "uuid-ossp";

-- ---- seed 000, Part B, 1. Database Schema, "New Tables:" (verbatim) ----------------------
-- PS/MS action log
-- Records every action taken by supervisors
CREATE TABLE IF NOT EXISTS supervisor_actions (
  id UUID PRIMARY KEY DEFAULT uuid_generate_v4(),
  session_id VARCHAR(255) NOT NULL, -- Unique session identifier
  supervisor_type VARCHAR(10) NOT NULL, -- 'PS' or 'MS'
  project VARCHAR(100), -- Project name (e.g., 'consilio-s', NULL for MS)
  action_type VARCHAR(50) NOT NULL, -- spawn, commit, deploy, plan, validate, search, tool_call
  action_category VARCHAR(50), -- deployment, git, planning, execution, learning

  -- Action details (JSONB for flexibility)
  context JSONB NOT NULL DEFAULT '{}', -- Action-specific context
  /*
  Example contexts by action_type:

  spawn: {
    subagent_type: "implementation",
    model: "haiku",
    task_description: "Implement authentication",
    epic_id: "epic-012",
    agent_id: "abc123"
  }

  commit: {
    files: ["src/auth.ts", "tests/auth.test.ts"],
    message: "feat: add JWT authentication",
    branch: "feature/auth",
    epic_id: "epic-012",
    commit_hash: "a1b2c3d4"
  }

  deploy: {
    service: "consilio-api",
    port: 5000,
    type: "docker",
    health_check_url: "http://localhost:5000/health",
    deployment_status: "success"
  }

  plan: {
    epic_id: "epic-012",
    approach: "JWT with httpOnly cookies",
    learnings_consulted: ["learning-042", "learning-053"],
    decisions: ["Use JWT", "Store in cookies"]
  }

  validate: {
    epic_id: "epic-012",
    validation_type: "acceptance_criteria",
    passed: true,
    failures: []
  }

  tool_call: {
    tool_name: "mcp_meta_allocate_port",
    params: {port: 5000, service: "api"},
    result: {success: true}
  }
  */

  -- Outcome
  outcome VARCHAR(50) NOT NULL DEFAULT 'success', -- success, failure, blocked, in_progress
  error_message TEXT, -- If outcome = failure
  duration_seconds INTEGER, -- How long action took

  -- Metadata
  timestamp TIMESTAMP WITH TIME ZONE DEFAULT NOW() NOT NULL,
  metadata JSONB DEFAULT '{}',

  -- Relationships
  parent_action_id UUID REFERENCES supervisor_actions(id), -- If this action spawned from another
  related_epic_id VARCHAR(100), -- Link to epic if applicable
  related_issue_id VARCHAR(100) -- Link to issue if applicable
);

-- Indexes
CREATE INDEX idx_supervisor_actions_session_id ON supervisor_actions(session_id);
CREATE INDEX idx_supervisor_actions_type ON supervisor_actions(action_type);
CREATE INDEX idx_supervisor_actions_supervisor_type ON supervisor_actions(supervisor_type);
CREATE INDEX idx_supervisor_actions_project ON supervisor_actions(project);
CREATE INDEX idx_supervisor_actions_timestamp ON supervisor_actions(timestamp DESC);
CREATE INDEX idx_supervisor_actions_outcome ON supervisor_actions(outcome);
CREATE INDEX idx_supervisor_actions_epic ON supervisor_actions(related_epic_id);

-- GIN index for JSONB context search
CREATE INDEX idx_supervisor_actions_context ON supervisor_actions USING GIN(context);

-- Session tracking
CREATE TABLE IF NOT EXISTS supervisor_sessions (
  session_id VARCHAR(255) PRIMARY KEY,
  supervisor_type VARCHAR(10) NOT NULL,
  project VARCHAR(100),
  started_at TIMESTAMP WITH TIME ZONE DEFAULT NOW() NOT NULL,
  last_activity TIMESTAMP WITH TIME ZONE DEFAULT NOW() NOT NULL,
  ended_at TIMESTAMP WITH TIME ZONE,
  session_type VARCHAR(20) NOT NULL, -- 'cli' or 'browser'
  disconnect_reason VARCHAR(100), -- 'normal', 'network_disconnect', 'timeout', etc.
  total_actions INTEGER DEFAULT 0,
  metadata JSONB DEFAULT '{}' -- Can store: user, machine, claude_version, etc.
);

CREATE INDEX idx_supervisor_sessions_project ON supervisor_sessions(project);
CREATE INDEX idx_supervisor_sessions_started_at ON supervisor_sessions(started_at DESC);
CREATE INDEX idx_supervisor_sessions_last_activity ON supervisor_sessions(last_activity DESC);

-- ---- seed 000, Part B, 1. Database Schema, "Helper Functions:" (verbatim) ---------------
-- Get recent actions for a session
CREATE OR REPLACE FUNCTION get_session_actions(
  p_session_id VARCHAR,
  p_limit INTEGER DEFAULT 50
)
RETURNS TABLE (
  action_id UUID,
  action_type VARCHAR,
  context JSONB,
  outcome VARCHAR,
  timestamp TIMESTAMP WITH TIME ZONE
) AS $$
BEGIN
  RETURN QUERY
  SELECT id, action_type, context, outcome, timestamp
  FROM supervisor_actions
  WHERE session_id = p_session_id
  ORDER BY timestamp DESC
  LIMIT p_limit;
END;
$$ LANGUAGE plpgsql;

-- Get last session for resume
CREATE OR REPLACE FUNCTION get_last_session(
  p_project VARCHAR,
  p_supervisor_type VARCHAR DEFAULT 'PS'
)
RETURNS TABLE (
  session_id VARCHAR,
  last_activity TIMESTAMP WITH TIME ZONE,
  total_actions INTEGER,
  last_action_type VARCHAR,
  last_action_context JSONB
) AS $$
BEGIN
  RETURN QUERY
  SELECT
    ss.session_id,
    ss.last_activity,
    ss.total_actions,
    sa.action_type as last_action_type,
    sa.context as last_action_context
  FROM supervisor_sessions ss
  LEFT JOIN LATERAL (
    SELECT action_type, context
    FROM supervisor_actions
    WHERE session_id = ss.session_id
    ORDER BY timestamp DESC
    LIMIT 1
  ) sa ON true
  WHERE ss.project = p_project
    AND ss.supervisor_type = p_supervisor_type
  ORDER BY ss.last_activity DESC
  LIMIT 1;
END;
$$ LANGUAGE plpgsql;

-- Activity report
CREATE OR REPLACE VIEW supervisor_activity_summary AS
SELECT
  DATE(timestamp) as activity_date,
  supervisor_type,
  project,
  action_type,
  outcome,
  COUNT(*) as action_count,
  AVG(duration_seconds) as avg_duration_seconds
FROM supervisor_actions
GROUP BY DATE(timestamp), supervisor_type, project, action_type, outcome
ORDER BY activity_date DESC, action_count DESC;
