-- Runs are listed by session (the gateway's session view filters runs on
-- session_id). The index holds only runs that have a session, and a
-- session never changes once a run exists, so it costs a write when such
-- a run is created, not on every commit (unlike an index on updated_at).
CREATE INDEX IF NOT EXISTS idx_runs_session ON runs(session_id)
  WHERE session_id IS NOT NULL;
