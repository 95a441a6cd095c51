-- Instances: the address each running server instance answers on for the others (APP_INSTANCE_URL), so
-- an instance that receives a request for a user whose home (a `home` lease: server/chat/home/) another
-- instance holds can forward it there. A row lives while its instance runs; a restarted instance on the
-- same address replaces its old row.
CREATE TABLE instances (
  id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  started_at BIGINT NOT NULL
);

CREATE INDEX instances_by_url ON instances (url);
