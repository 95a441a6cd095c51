/**
 * The in-process signal bus: one instance (the embedded SQLite engine) signals only itself. Handlers run
 * in a microtask, as a signal from another instance would arrive later, never inside the publisher.
 */
import type { SignalBus, SignalHandler } from "./bus.ts";

export class MemoryBus implements SignalBus {
  readonly kind = "memory" as const;
  private readonly channels = new Map<string, Set<SignalHandler>>();

  async publish(channel: string, payload: string): Promise<void> {
    for (const fn of this.channels.get(channel) ?? [])
      queueMicrotask(() => {
        try {
          fn(payload);
        } catch (error) {
          console.error(`a handler of the signal '${channel}' failed:`, error);
        }
      });
  }

  async subscribe(channel: string, fn: SignalHandler): Promise<() => Promise<void>> {
    const set = this.channels.get(channel) ?? new Set<SignalHandler>();
    this.channels.set(channel, set);
    // A wrapper per subscription: the same function subscribed twice is two subscriptions.
    const handler: SignalHandler = (payload) => fn(payload);
    set.add(handler);
    return async () => {
      set.delete(handler);
    };
  }

  async close(): Promise<void> {
    this.channels.clear();
  }
}
