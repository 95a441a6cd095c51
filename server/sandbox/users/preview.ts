/**
 * Preview URLs: `/api/sandbox/preview/<token>/...`, where the token names the owner, the port and an
 * expiry, signed with HMAC-SHA256 under the server secret (`APP_AUTH_SECRET`, else a per-process key:
 * auth/server-keys.ts).
 * A forged, altered or expired token is refused; the owner in it must be the caller.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { serverKey } from "../../auth/server-keys.ts";

export const PREVIEW_LIFETIME_MS = 10 * 60 * 1000;

export interface PreviewClaim {
  owner: string;
  port: number;
  expiresAt: number;
}

export class PreviewSigner {
  private readonly key: Buffer;

  constructor(
    secret: string | undefined,
    private readonly clock: () => number = Date.now,
  ) {
    this.key = serverKey(secret, "preview");
  }

  sign(owner: string, port: number): { token: string; expiresAt: number } {
    const expiresAt = this.clock() + PREVIEW_LIFETIME_MS;
    const body = Buffer.from(JSON.stringify({ o: owner, p: port, e: expiresAt })).toString("base64url");
    return { token: `${body}.${this.mac(body)}`, expiresAt };
  }

  /** The claim of a valid, unexpired token; undefined otherwise. */
  verify(token: string): PreviewClaim | undefined {
    const [body, mac, extra] = token.split(".");
    if (!body || !mac || extra !== undefined) return undefined;
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const claim = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as {
        o: unknown;
        p: unknown;
        e: unknown;
      };
      if (typeof claim.o !== "string" || typeof claim.p !== "number" || typeof claim.e !== "number")
        return undefined;
      if (claim.e <= this.clock()) return undefined;
      return { owner: claim.o, port: claim.p, expiresAt: claim.e };
    } catch {
      return undefined;
    }
  }

  private mac(body: string): string {
    return createHmac("sha256", this.key).update(body).digest("base64url");
  }
}
