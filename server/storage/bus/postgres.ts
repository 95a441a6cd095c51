/**
 * The signal bus over PostgreSQL's LISTEN/NOTIFY (no other service): a small Bun.SQL handle of its own,
 * apart from the port's pool. Bun.SQL keeps every LISTEN on one dedicated connection (opened by the first
 * subscription, reconnected and re-subscribed if it drops); NOTIFY goes out as an ordinary query, and
 * PostgreSQL delivers a channel's notifications in commit order, to this instance's listeners as well.
 */
// A type only: the SQL client (`Bun.SQL`) loads when a bus is made, never on a SQLite deployment.
import type { SQL } from "bun";
import type { SignalBus, SignalHandler } from "./bus.ts";

export class PostgresBus implements SignalBus {
  readonly kind = "postgres" as const;
  private readonly sql: SQL;

  constructor(url: string) {
    this.sql = new Bun.SQL({ url, max: 2, onnotice: () => {} } as ConstructorParameters<typeof SQL>[0]);
  }

  async publish(channel: string, payload: string): Promise<void> {
    await this.sql.notify(channel, payload);
  }

  async subscribe(channel: string, fn: SignalHandler): Promise<() => Promise<void>> {
    const subscription = await this.sql.listen(channel, (payload) => {
      try {
        fn(payload);
      } catch (error) {
        console.error(`a handler of the signal '${channel}' failed:`, error);
      }
    });
    return () => subscription.unlisten();
  }

  async close(): Promise<void> {
    await this.sql.close();
  }
}
