/**
 * Every password hash and verification of the process goes through one queue: at most `concurrency`
 * (default: the CPU cores) run at once, at most `line` more wait their turn, and a caller beyond that
 * line is refused at once with 503 and a Retry-After rather than held in memory. argon2id is slow and
 * memory-hard on purpose (64 MiB and tens of milliseconds each), so unbounded parallel sign-ins and
 * sign-ups would otherwise saturate the CPU and memory of the whole server.
 *
 * The hasher is injectable so tests can count and time real verifications (it is Bun's argon2id).
 */
import { availableParallelism } from "node:os";
import { AppError } from "../http/errors.ts";

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string): Promise<boolean>;
}

/** Bun's argon2id (`Bun.password`), with its default cost. */
export const ARGON2ID: PasswordHasher = {
  hash: (password) => Bun.password.hash(password),
  verify: (password, hash) => Bun.password.verify(password, hash),
};

export interface PasswordQueueOptions {
  /** Hashes running at once (default: the number of CPU cores). */
  concurrency?: number;
  /** Callers waiting beyond those (default 32): more are refused with 503. */
  line?: number;
  hasher?: PasswordHasher;
}

export class PasswordQueue {
  readonly concurrency: number;
  readonly line: number;
  private readonly hasher: PasswordHasher;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** A moving average of one hash's time (ms), for the Retry-After of a refusal. */
  private averageMs = 100;

  constructor(options: PasswordQueueOptions = {}) {
    this.concurrency = Math.max(1, options.concurrency ?? availableParallelism());
    this.line = Math.max(0, options.line ?? 32);
    this.hasher = options.hasher ?? ARGON2ID;
  }

  /** Whether a caller arriving now would be taken (running or in line); no side effect. */
  admits(): boolean {
    return this.running < this.concurrency || this.waiting.length < this.line;
  }

  /** The 503 a caller beyond the line gets, with an estimate of when the line will have moved. */
  busy(): AppError {
    const seconds = Math.ceil(((this.waiting.length / this.concurrency + 1) * this.averageMs) / 1000);
    return new AppError("unavailable", "The server is busy checking passwords; try again in a moment", {
      headers: { "retry-after": String(Math.max(1, seconds)) },
    });
  }

  hash(password: string): Promise<string> {
    return this.run(() => this.hasher.hash(password));
  }

  verify(password: string, hash: string): Promise<boolean> {
    return this.run(() => this.hasher.verify(password, hash));
  }

  /**
   * Takes a slot or a place in line synchronously (no await before that decision, so a caller that
   * checked `admits()` in the same tick is taken), then runs the work; a finished one hands its slot
   * straight to the first in line.
   */
  private async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.concurrency) this.running++;
    else if (this.waiting.length < this.line)
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    else throw this.busy();
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.averageMs = this.averageMs * 0.8 + (performance.now() - started) * 0.2;
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
