/**
 * Protected mode, the real jail: a file a user uploads through the Files API while their sandbox runs
 * (its processes run as the user's own uid on the host, the server is root) can be edited by the sandbox at once,
 * in a folder the upload created; and a folder the sandbox swaps for a symlink to a host folder does not
 * send the upload there.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { LocalSandboxProvider } from "../../server/sandbox/users/provider.ts";
import { ownerFolders } from "../../server/workspace/owner-folders.ts";
import { authApp, type SignedUser, signUp } from "../auth/auth-app.ts";
import type { TestApp } from "../helpers/app.ts";
import { tempDir } from "../helpers/tmp.ts";

setDefaultTimeout(90_000);

let t: TestApp;
let sandboxes: LocalSandboxProvider;
let ann: SignedUser;
beforeAll(async () => {
  t = await authApp();
  sandboxes = t.family("chat").runtime.sandboxes as LocalSandboxProvider;
  ann = await signUp(t, "ann@example.org");
});
afterAll(() => t.close());

async function run(owner: string, command: string) {
  let out = "";
  const { exitCode } = await sandboxes.exec(owner, command, {
    onData: (data) => {
      out += data.toString("utf8");
    },
  });
  return { out, exitCode };
}

const upload = (path: string, content: string) =>
  t.json<{ path?: string; error?: { code: string; message: string } }>("/api/files/content", {
    method: "PUT",
    headers: { "content-type": "application/json", ...ann.bearer },
    body: JSON.stringify({ path, content, overwrite: true }),
  });

test("an upload is the sandbox's to edit at once, and a swapped folder does not redirect it", async () => {
  expect(process.getuid?.()).toBe(0); // the case that matters: a root server, an unprivileged jail
  // The jail is running (and its workspace handed to the user's uid) before the upload.
  expect((await run(ann.id, "id -u")).out.trim()).toBe("65534");
  const uid = (await sandboxes.hostUid(ann.id)) as number;
  expect(uid).toBeGreaterThan(65534);

  const put = await upload("incoming/data.csv", "a,b\n1,2\n");
  expect(put.status).toBe(200);
  const { out, exitCode } = await run(
    ann.id,
    "echo 3,4 >> files/incoming/data.csv && touch files/incoming/next.txt && mv files/incoming/data.csv files/incoming/moved.csv && cat files/incoming/moved.csv",
  );
  expect({ out, exitCode }).toEqual({ out: "a,b\n1,2\n3,4\n", exitCode: 0 });
  const workspace = ownerFolders(t.dataDir, ann.id).workspace;
  expect(lstatSync(join(workspace, "files/incoming/moved.csv")).uid).toBe(uid);

  // The sandbox plants a symlink to a host folder where the upload's folder was.
  const host = tempDir("atrium-host-");
  try {
    await run(ann.id, `mv files/incoming files/away && ln -s ${host.path} files/incoming`);
    const redirected = await upload("incoming/planted.txt", "pwned");
    expect(redirected.status).toBe(422);
    expect(redirected.body.error?.message).toBe("path must not go through a symbolic link");
    expect(existsSync(join(host.path, "planted.txt"))).toBe(false);
    expect(readFileSync(join(workspace, "files/away/moved.csv"), "utf8")).toBe("a,b\n1,2\n3,4\n");
  } finally {
    host.remove();
  }
});
