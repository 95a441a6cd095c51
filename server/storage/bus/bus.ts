/**
 * The signal bus: small messages between the server instances on one database (a turn's log batch
 * committed, a cancellation for the instance running a turn). One implementation per file: in-process
 * (memory.ts: SQLite, one instance), PostgreSQL LISTEN/NOTIFY (postgres.ts); another (Redis) would be a
 * third file with the same interface. Delivery is at most once and only to instances listening at the
 * time: what must not be lost is in the database, and a signal only says "look now".
 */
export type SignalHandler = (payload: string) => void;

export interface SignalBus {
  readonly kind: "memory" | "postgres";
  /** Sends `payload` (under 8000 bytes: PostgreSQL's limit) to every subscriber of `channel`, here too. */
  publish(channel: string, payload: string): Promise<void>;
  /** Calls `fn` for each payload published on `channel` from now on; resolves once listening. */
  subscribe(channel: string, fn: SignalHandler): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
