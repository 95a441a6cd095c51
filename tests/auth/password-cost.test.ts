/**
 * The production password cost: the suite's in-process apps hash with CHEAP_ARGON2ID (tests/helpers/app.ts)
 * to save CPU on a busy machine, so this is the one place that pins what a real server stores: argon2id at
 * 64 MiB and two passes, and that a hash of either cost verifies through the same path.
 */
import { describe, expect, test } from "bun:test";
import { ARGON2ID, PasswordQueue } from "../../server/auth/password-queue.ts";
import { CHEAP_ARGON2ID } from "../helpers/app.ts";

describe("password cost", () => {
  test("the server's hasher stores argon2id at 64 MiB and two passes", async () => {
    const hash = await ARGON2ID.hash("correct horse battery staple");
    expect(hash).toStartWith("$argon2id$v=19$m=65536,t=2,p=1$");
    expect(await ARGON2ID.verify("correct horse battery staple", hash)).toBe(true);
    expect(await ARGON2ID.verify("wrong", hash)).toBe(false);
  });

  test("a queue built without a hasher, as the server's context builds it, hashes at that cost", async () => {
    expect(await new PasswordQueue().hash("pw")).toStartWith("$argon2id$v=19$m=65536,t=2,p=1$");
  });

  test("the tests' cheap hash is argon2id too, and verifies through the server's queue", async () => {
    const hash = await CHEAP_ARGON2ID.hash("pw");
    expect(hash).toStartWith("$argon2id$v=19$m=1024,t=1,p=1$");
    const queue = new PasswordQueue();
    expect(await queue.verify("pw", hash)).toBe(true);
    expect(await queue.verify("pw2", hash)).toBe(false);
  });
});
