-- Leases: which server instance owns a piece of live work (a running turn, an index build). The holder
-- renews its rows while it lives (`expires_at`, ms since the epoch); a row past its expiry belongs to an
-- instance that stopped, and another instance may take it over (server/storage/leases.ts).
CREATE TABLE leases (
  kind TEXT NOT NULL,
  id TEXT NOT NULL,
  holder TEXT NOT NULL,
  heartbeat_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (kind, id)
);

CREATE INDEX leases_by_holder ON leases (holder);
