-- A run found by its Idempotency-Key alone (GET /api/runs?idempotency_key=): a client that keeps only
-- the key (the OpenAI endpoint's idempotent rlm turns) finds the session its turn ran in.
CREATE INDEX turn_runs_owner_key ON turn_runs (owner_id, idempotency_key, created_at);
