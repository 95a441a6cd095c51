/**
 * The agent's tools in protected mode: `bash`, `read`, `write`, `edit` and `ls` run inside the owner's
 * sandbox through the provider interface (provider-api.ts), so they see exactly the files the sandbox
 * sees, at the paths the sandbox shows: the working dir is `/home/atrium/agent-workspace` (the owner's
 * workspace folder). Every file operation is a command in the sandbox (`cat`, `base64 -d`, `mkdir -p`,
 * `find`): paths are resolved by the jail's kernel inside the jail, so a symlink a command planted
 * leads only where the sandbox's own shell could go, and the host never follows a path from the model.
 * The tool_call guard (sandboxPathRefusal) keeps the tools inside the workspace folder and out of its
 * `.pi/` for writes (that bind is read-only in the jail anyway). grep and find are the shell's there.
 */
import { posix } from "node:path";
import { loadPi } from "../../models/pi-sdk.ts";
import type { SandboxProvider } from "../../sandbox/users/provider-api.ts";

/** The tools that have a sandbox form; grep/find are refused with a pointer to the shell. */
export const SANDBOX_TOOLS = ["read", "bash", "edit", "write", "ls"] as const;
const OP_TIMEOUT_S = 60;
/** Largest file the tools read through the sandbox (the read tool shows far less of it). */
const MAX_READ_BYTES = 64 * 1024 * 1024;
/** Bytes written per command (a command line is one argument of at most 128 KiB). */
const WRITE_CHUNK = 48 * 1024;

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** Why a file tool call may not run in sandbox mode, or undefined when it stays in the workspace. */
export function sandboxPathRefusal(workspace: string, toolName: string, input: unknown): string | undefined {
  if (toolName === "grep" || toolName === "find")
    return `The ${toolName} tool is not available here: run grep or find with the bash tool in your sandbox.`;
  if (!["read", "write", "edit", "ls"].includes(toolName)) return undefined;
  const raw = (input as { path?: unknown } | null | undefined)?.path;
  const requested = typeof raw === "string" && raw !== "" ? raw : ".";
  if (typeof raw !== "string" && raw !== undefined && raw !== null)
    return `The path '${String(raw)}' is outside your workspace; use a path relative to it.`;
  const expanded = requested.startsWith("@") ? requested.slice(1) : requested;
  const full = posix.resolve(workspace, expanded);
  if (
    expanded.includes("\0") ||
    expanded.startsWith("~") ||
    (full !== workspace && !full.startsWith(`${workspace}/`))
  )
    return `The path '${requested}' is outside your workspace (${workspace}); use a path relative to it.`;
  const first = full.slice(workspace.length + 1).split("/")[0] ?? "";
  if ((toolName === "write" || toolName === "edit") && first.toLowerCase() === ".pi")
    return `The path '${requested}' is in .pi/, the workspace's pi configuration: the agent's tools do not write there.`;
  return undefined;
}

/** A command's output and exit code, collected (bounded). */
async function run(
  sandbox: SandboxProvider,
  owner: string,
  command: string,
): Promise<{ code: number | null; out: Buffer }> {
  const chunks: Buffer[] = [];
  let size = 0;
  const { exitCode } = await sandbox.exec(owner, command, {
    timeout: OP_TIMEOUT_S,
    onData: (data) => {
      size += data.length;
      if (size <= MAX_READ_BYTES) chunks.push(data);
    },
  });
  if (size > MAX_READ_BYTES) throw new Error(`The file is larger than ${MAX_READ_BYTES} bytes`);
  return { code: exitCode, out: Buffer.concat(chunks) };
}

async function check(sandbox: SandboxProvider, owner: string, command: string, message: string) {
  const { code, out } = await run(sandbox, owner, command);
  if (code !== 0)
    throw new Error(`${message}${out.length > 0 ? `: ${out.toString("utf8").trim().slice(0, 500)}` : ""}`);
  return out;
}

/** Image types the read tool shows as images, by their first bytes. */
function sniffImage(head: Buffer): string | undefined {
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return "image/png";
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "image/jpeg";
  if (head.subarray(0, 4).toString("latin1") === "GIF8") return "image/gif";
  if (head.subarray(0, 4).toString("latin1") === "RIFF" && head.subarray(8, 12).toString("latin1") === "WEBP")
    return "image/webp";
  return undefined;
}

export function sandboxFileOperations(sandbox: SandboxProvider, owner: string) {
  const readFile = (path: string) =>
    check(sandbox, owner, `cat -- ${quote(path)} 2>&1`, `Cannot read ${path}`);
  const writeFile = async (path: string, content: string) => {
    const bytes = Buffer.from(content, "utf8");
    let offset = 0;
    do {
      const part = bytes.subarray(offset, offset + WRITE_CHUNK).toString("base64");
      const redirect = offset === 0 ? ">" : ">>";
      await check(
        sandbox,
        owner,
        `printf %s ${quote(part)} | base64 -d ${redirect} ${quote(path)}`,
        `Cannot write ${path}`,
      );
      offset += WRITE_CHUNK;
    } while (offset < bytes.length);
  };
  return {
    read: {
      readFile,
      access: async (path: string) => {
        await check(
          sandbox,
          owner,
          `test -f ${quote(path)} -a -r ${quote(path)}`,
          `File not found or not readable: ${path}`,
        );
      },
      detectImageMimeType: async (path: string) =>
        sniffImage(await check(sandbox, owner, `head -c 16 -- ${quote(path)}`, `Cannot read ${path}`)) ??
        null,
    },
    write: {
      writeFile,
      mkdir: async (dir: string) => {
        await check(sandbox, owner, `mkdir -p -- ${quote(dir)} 2>&1`, `Cannot create ${dir}`);
      },
    },
    edit: {
      readFile,
      writeFile,
      access: async (path: string) => {
        await check(
          sandbox,
          owner,
          `test -f ${quote(path)} -a -r ${quote(path)} -a -w ${quote(path)}`,
          `File not found or not writable: ${path}`,
        );
      },
    },
    ls: {
      exists: async (path: string) => (await run(sandbox, owner, `test -e ${quote(path)}`)).code === 0,
      stat: async (path: string) => {
        const { code } = await run(sandbox, owner, `test -e ${quote(path)}`);
        if (code !== 0) throw new Error(`Path not found: ${path}`);
        const dir = (await run(sandbox, owner, `test -d ${quote(path)}`)).code === 0;
        return { isDirectory: () => dir };
      },
      readdir: async (path: string) => {
        const out = await check(
          sandbox,
          owner,
          `find ${quote(path)} -mindepth 1 -maxdepth 1 -printf '%f\\0'`,
          `Cannot list ${path}`,
        );
        return out.toString("utf8").split("\0").filter(Boolean);
      },
    },
  };
}

/** pi's tools of SANDBOX_TOOLS bound to the owner's sandbox (they replace the built-ins by name). */
export async function sandboxTools(sandbox: SandboxProvider, owner: string, imageAutoResize: boolean) {
  const pi = await loadPi();
  const ops = sandboxFileOperations(sandbox, owner);
  const cwd = sandbox.workspace;
  const bash = pi.createBashToolDefinition(cwd, {
    operations: {
      exec: (command, _cwd, { onData, signal, timeout }) =>
        sandbox.exec(owner, command, { onData, signal, timeout }),
    },
  });
  return [
    { ...pi.defineTool(bash), executionMode: "sequential" as const },
    pi.defineTool(
      pi.createReadToolDefinition(cwd, { autoResizeImages: imageAutoResize, operations: ops.read }),
    ),
    pi.defineTool(pi.createWriteToolDefinition(cwd, { operations: ops.write })),
    pi.defineTool(pi.createEditToolDefinition(cwd, { operations: ops.edit })),
    pi.defineTool(pi.createLsToolDefinition(cwd, { operations: ops.ls })),
  ];
}
