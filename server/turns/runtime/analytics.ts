/**
 * Product analytics (spec "Analytics events"): events are posted to a PostHog-compatible `/capture/`
 * endpoint at `analytics.host` when analytics are enabled and the token variable is set; otherwise
 * nothing is sent. One stable per-installation `distinct_id` lives in `<data>/analytics-instance-id`;
 * the local user id is never used. Sending never blocks a request or startup; failures are dropped.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isoNow } from "../../lib/clock.ts";
import type { Logger } from "../../log.ts";
import { APP_VERSION } from "../../version.ts";

export type AnalyticsEvent =
  | "session_created"
  | "session_updated"
  | "turn_created"
  | "turn_failed"
  | "artifact_downloaded"
  | "run_cancellation_requested"
  | "skill_listed"
  | "settings_policy_updated";

export class TurnAnalytics {
  private distinctId: string | undefined;
  readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly options: {
      enabled: boolean;
      host: string;
      token?: string;
      dataDir: string;
      log: Logger;
    },
  ) {}

  get enabled(): boolean {
    return this.options.enabled && Boolean(this.options.token);
  }

  /** The per-installation id, created on first use. */
  instanceId(): string {
    if (this.distinctId) return this.distinctId;
    const file = join(this.options.dataDir, "analytics-instance-id");
    if (existsSync(file)) this.distinctId = readFileSync(file, "utf8").trim();
    if (!this.distinctId) {
      this.distinctId = crypto.randomUUID();
      mkdirSync(this.options.dataDir, { recursive: true });
      writeFileSync(file, `${this.distinctId}\n`, { mode: 0o600 });
    }
    return this.distinctId;
  }

  capture(event: AnalyticsEvent, properties: Record<string, unknown> = {}): void {
    if (!this.enabled) return;
    const body = {
      api_key: this.options.token,
      event,
      distinct_id: this.instanceId(),
      properties: { ...properties, app_version: APP_VERSION, $process_person_profile: false },
      timestamp: isoNow(),
    };
    const sent = fetch(`${this.options.host}/capture/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    }).then(
      () => {},
      (error) =>
        this.options.log.debug("analytics event not sent", { event, error: (error as Error).message }),
    );
    this.pending.add(sent);
    void sent.finally(() => this.pending.delete(sent));
  }

  /** Waits for events in flight (tests, shutdown). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}
