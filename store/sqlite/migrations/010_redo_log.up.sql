-- The LSN of the last redo log record the database holds (redoapply.go):
-- opening the database replays the records above it. Python ignores the
-- table.
CREATE TABLE IF NOT EXISTS redo_applied (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  lsn INTEGER NOT NULL
);
INSERT OR IGNORE INTO redo_applied (id, lsn) VALUES (1, 0);
