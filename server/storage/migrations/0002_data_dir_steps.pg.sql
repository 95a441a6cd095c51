-- One-time steps that reshape the data dir's folders rather than its tables (the per-owner folder
-- rename of server/workspace/migrate-folders.ts), each recorded once it has completed.
CREATE TABLE data_dir_steps (
  name TEXT PRIMARY KEY,
  applied_at TEXT NOT NULL DEFAULT (to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
);
