/**
 * A scripted Daytona-compatible provider on a real loopback port, for the remote sandbox provider's
 * tests: the control-plane API under `/api` (sandboxes, start/stop/delete, preview links, toolbox URL)
 * and the toolbox API under `/toolbox/<sandboxId>` (sessions, async commands, logs, files). It records
 * every request (method, path, Authorization, body) so tests can check what the client sent, and lets a
 * test drive a running command's output and exit by hand, or make the provider fail, stall or refuse.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | null;
  headers: Headers;
  /** The JSON body, when there was one. */
  json?: unknown;
}

export interface FakeSandbox {
  id: string;
  name: string;
  state: string;
  labels: Record<string, string>;
  target?: string;
  /** GETs left before a `creating`/`starting` sandbox reports `started`. */
  pollsToStart: number;
}

export interface FakeCommand {
  sandboxId: string;
  session: string;
  id: string;
  line: string;
  output: string;
  exitCode?: number;
  killed: boolean;
  append(text: string): void;
  finish(code: number): void;
}

export interface DaytonaOptions {
  /** Keys the provider accepts (others get 401). */
  keys?: string[];
  /** GETs a new or starting sandbox needs before it reports `started` (default 1). */
  pollsToStart?: number;
  /** The preview link a port gets (default a `*.preview.test` name nothing answers on). */
  previewUrl?: (port: string, sandboxId: string) => string;
}

export interface FakeDaytona {
  url: string;
  apiUrl: string;
  requests: RecordedRequest[];
  sandboxes: Map<string, FakeSandbox>;
  commands: FakeCommand[];
  files: Map<string, Uint8Array>;
  folders: Set<string>;
  /** Answer every request with this status (and a body naming what was sent), until cleared. */
  failWith?: number;
  /** Hold every answer this long (a slow provider). */
  delayMs: number;
  /** The toolbox proxy URL new sandboxes report (default this server's `/toolbox`). */
  toolboxProxyUrl: string;
  stop(): Promise<void>;
}

export function startFakeDaytona(options: DaytonaOptions = {}): FakeDaytona {
  const keys = new Set(options.keys ?? ["test-key"]);
  let counter = 0;
  const fake = {
    requests: [] as RecordedRequest[],
    sandboxes: new Map<string, FakeSandbox>(),
    commands: [] as FakeCommand[],
    files: new Map<string, Uint8Array>(),
    folders: new Set<string>(),
    failWith: undefined as number | undefined,
    delayMs: 0,
    toolboxProxyUrl: "",
  } as FakeDaytona;

  const json = (body: unknown, status = 200) => Response.json(body, { status });
  const notFound = (what: string) => json({ statusCode: 404, message: `${what} not found` }, 404);
  const view = (s: FakeSandbox) => ({
    id: s.id,
    name: s.name,
    state: s.state,
    labels: s.labels,
    target: s.target ?? "us",
    toolboxProxyUrl: fake.toolboxProxyUrl,
  });
  const find = (idOrName: string) =>
    fake.sandboxes.get(idOrName) ?? [...fake.sandboxes.values()].find((s) => s.name === idOrName);

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const recorded: RecordedRequest = {
      method: req.method,
      path: url.pathname,
      query: url.searchParams,
      authorization: req.headers.get("authorization"),
      headers: req.headers,
    };
    const type = req.headers.get("content-type") ?? "";
    let form: FormData | undefined;
    if (type.includes("application/json")) recorded.json = await req.json();
    else if (type.includes("multipart/form-data")) form = await req.formData();
    fake.requests.push(recorded);
    if (fake.delayMs) await Bun.sleep(fake.delayMs);
    if (fake.failWith) {
      const body = {
        statusCode: fake.failWith,
        message: `scripted failure; you sent ${recorded.authorization}`,
      };
      // A redirect points back at this server, so a client that followed it would be seen doing so.
      const headers = fake.failWith >= 300 && fake.failWith < 400 ? { location: "/elsewhere" } : undefined;
      return Response.json(body, { status: fake.failWith, headers });
    }
    const token = recorded.authorization?.replace(/^Bearer /, "") ?? "";
    if (!keys.has(token)) return json({ statusCode: 401, message: `Invalid API key ${token}` }, 401);

    const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    if (parts[0] === "api" && parts[1] === "sandbox") return api(req.method, parts.slice(2), recorded.json);
    if (parts[0] === "toolbox")
      return toolbox(req.method, parts[1] ?? "", parts.slice(2), url, recorded.json, form);
    return notFound("route");
  }

  function api(method: string, rest: string[], body: unknown): Response {
    if (rest.length === 0 && method === "POST") {
      const { name, labels, target } = body as {
        name: string;
        labels: Record<string, string>;
        target?: string;
      };
      if (find(name))
        return json({ statusCode: 409, message: `Sandbox with name ${name} already exists` }, 409);
      const sandbox = { id: `sb-${++counter}`, name, labels, target, state: "creating", pollsToStart: 0 };
      sandbox.pollsToStart = options.pollsToStart ?? 1;
      fake.sandboxes.set(sandbox.id, sandbox);
      return json(view(sandbox));
    }
    const sandbox = find(rest[0] ?? "");
    if (!sandbox) return notFound("Sandbox");
    const action = rest.slice(1).join("/");
    if (method === "GET" && action === "") {
      if (["creating", "starting"].includes(sandbox.state) && sandbox.pollsToStart-- <= 0)
        sandbox.state = "started";
      return json(view(sandbox));
    }
    if (method === "DELETE" && action === "") {
      fake.sandboxes.delete(sandbox.id);
      return json({ ...view(sandbox), state: "destroying" });
    }
    if (method === "POST" && action === "start") {
      sandbox.state = "starting";
      sandbox.pollsToStart = options.pollsToStart ?? 1;
      return json(view(sandbox));
    }
    if (method === "POST" && action === "stop") {
      sandbox.state = "stopped";
      return json(view(sandbox));
    }
    if (method === "GET" && action === "toolbox-proxy-url") return json({ url: fake.toolboxProxyUrl });
    const preview = action.match(/^ports\/(\d+)\/preview-url$/);
    if (method === "GET" && preview) {
      const port = preview[1];
      return json({
        sandboxId: sandbox.id,
        url:
          options.previewUrl?.(port as string, sandbox.id) ?? `https://${port}-${sandbox.id}.preview.test/`,
        token: `tok-${sandbox.id}`,
      });
    }
    return notFound("route");
  }

  function toolbox(
    method: string,
    id: string,
    rest: string[],
    url: URL,
    body: unknown,
    form: FormData | undefined,
  ): Response | Promise<Response> {
    const sandbox = fake.sandboxes.get(id);
    if (!sandbox) return notFound("Sandbox");
    if (sandbox.state !== "started") return json({ message: "sandbox is not running" }, 502);
    const path = rest.join("/");
    const filePath = url.searchParams.get("path") ?? "";
    if (method === "POST" && path === "files/folder") {
      fake.folders.add(`${id}:${filePath}`);
      return new Response(null, { status: 201 });
    }
    if (method === "POST" && path === "files/upload") {
      const file = form?.get("file");
      if (!(file instanceof Blob)) return json({ message: "file is required" }, 400);
      return file.arrayBuffer().then((bytes) => {
        fake.files.set(`${id}:${filePath}`, new Uint8Array(bytes));
        return new Response(null, { status: 200 });
      });
    }
    if (method === "GET" && path === "files/download") {
      const bytes = fake.files.get(`${id}:${filePath}`);
      return bytes ? new Response(new Uint8Array(bytes)) : notFound("File");
    }
    if (method === "POST" && path === "process/session") return new Response(null, { status: 201 });
    const session = rest[2] ?? "";
    if (method === "DELETE" && rest.length === 3) {
      for (const c of fake.commands) if (c.session === session && c.exitCode === undefined) c.killed = true;
      return new Response(null, { status: 204 });
    }
    if (method === "POST" && rest[3] === "exec") {
      const command: FakeCommand = {
        sandboxId: id,
        session,
        id: `cmd-${++counter}`,
        line: (body as { command: string }).command,
        output: "",
        killed: false,
        append: (text) => {
          command.output += text;
        },
        finish: (code) => {
          command.exitCode = code;
        },
      };
      fake.commands.push(command);
      return json({ cmdId: command.id });
    }
    const command = fake.commands.find((c) => c.session === session && c.id === rest[4]);
    if (!command) return notFound("Command");
    if (method === "GET" && rest.length === 5)
      return json({ id: command.id, command: command.line, exitCode: command.exitCode });
    if (method === "GET" && rest[5] === "logs")
      return new Response(command.output, { headers: { "content-type": "text/plain" } });
    return notFound("route");
  }

  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handle });
  fake.url = `http://127.0.0.1:${server.port}`;
  fake.apiUrl = `${fake.url}/api`;
  fake.toolboxProxyUrl = `${fake.url}/toolbox`;
  fake.stop = async () => void (await server.stop(true));
  return fake;
}
