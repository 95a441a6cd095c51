-- The sandbox webhook's replay memory (server/sandbox/users/webhook.ts): the SHA-256 of every signed body
-- accepted in the last 10 minutes. In the database, not a process's memory, so a body played back to
-- another instance behind the load balancer (or after a restart) is refused as well. `expires_at` is
-- milliseconds since the epoch; expired rows are swept at the next webhook.
CREATE TABLE sandbox_webhook_seen (
  digest TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
);
CREATE INDEX sandbox_webhook_seen_by_expiry ON sandbox_webhook_seen (expires_at);
