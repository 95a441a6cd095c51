/**
 * Session tokens in Lucia's design: `<id>.<secret>`, each part 120 random bits in lower-case base32.
 * The id finds the row; only SHA-256 of the secret is stored, and the presented secret's hash is compared
 * in constant time, so a leaked database (or a timing probe) yields no usable token.
 */
import { sha256 } from "@oslojs/crypto/sha2";
import { constantTimeEqual } from "@oslojs/crypto/subtle";
import { encodeBase32LowerCaseNoPadding, encodeHexLowerCase } from "@oslojs/encoding";

/** What a well-formed token looks like (anything else is not looked up at all). */
export const TOKEN_PATTERN = /^([a-z2-7]{24})\.([a-z2-7]{24})$/;

export function randomPart(): string {
  return encodeBase32LowerCaseNoPadding(crypto.getRandomValues(new Uint8Array(15)));
}

export interface NewToken {
  id: string;
  token: string;
  secretHash: Uint8Array;
}

export function newSessionToken(): NewToken {
  const id = randomPart();
  const secret = randomPart();
  return { id, token: `${id}.${secret}`, secretHash: hashSecret(secret) };
}

export function hashSecret(secret: string): Uint8Array {
  return sha256(new TextEncoder().encode(secret));
}

/** The id and secret of a token, or undefined when it is not one. */
export function splitToken(token: string): { id: string; secret: string } | undefined {
  const match = TOKEN_PATTERN.exec(token);
  return match ? { id: match[1] as string, secret: match[2] as string } : undefined;
}

export function secretMatches(secret: string, storedHash: Uint8Array): boolean {
  const presented = hashSecret(secret);
  return presented.length === storedHash.length && constantTimeEqual(presented, storedHash);
}

/** Invite codes are shown once and stored as their SHA-256 (hex). */
export function hashCode(code: string): string {
  return encodeHexLowerCase(sha256(new TextEncoder().encode(code)));
}
