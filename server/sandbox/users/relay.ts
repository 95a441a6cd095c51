/**
 * Preview relays: a Unix socket per previewed port of a running sandbox, in a folder private to the
 * server (mode 0700, never bound into any jail), each connection carried to 127.0.0.1:<port> inside the
 * jail over the runner's channel (local-sandbox.ts). The host never connects to a path the jail could
 * create or replace: the jail has no socket of its own, and the runner opens the TCP connection from
 * inside the jail's own network namespace, so servers bound to the jail's loopback answer.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Socket, UnixSocketListener } from "bun";
import type { UserSandbox } from "./local-sandbox.ts";

/** Ports previewed at once per sandbox; the least recently opened relay is closed past it. */
const MAX_RELAYS = 16;

interface Link {
  id?: number;
  open: boolean;
  /** Bytes the client sent before the jail side connected (the runner buffers the rest). */
  queue: Buffer[];
  /** Bytes for the client that its socket has not taken yet. */
  backlog: Buffer[];
}

export class PreviewRelays {
  private readonly relays = new Map<number, { path: string; listener: UnixSocketListener<Link> }>();

  constructor(
    private readonly sandbox: UserSandbox,
    /** The private folder and a name unique to this sandbox (sockets are `<dir>/<name>-<port>.sock`). */
    private readonly dir: string,
    private readonly name: string,
  ) {}

  /** The socket path that reaches `port` in the sandbox (opened on first use). */
  socketFor(port: number): string {
    const found = this.relays.get(port);
    if (found) return found.path;
    if (this.relays.size >= MAX_RELAYS) {
      const [oldest] = this.relays.keys();
      if (oldest !== undefined) this.closeOne(oldest);
    }
    const path = join(this.dir, `${this.name}-${port}.sock`);
    rmSync(path, { force: true });
    const sandbox = this.sandbox;
    const listener = Bun.listen<Link>({
      unix: path,
      socket: {
        open(socket) {
          socket.data = { open: false, queue: [], backlog: [] };
          socket.data.id = sandbox.connect(port, {
            opened() {
              socket.data.open = true;
              for (const bytes of socket.data.queue.splice(0)) sandbox.write(socket.data.id as number, bytes);
            },
            data(bytes) {
              socket.data.backlog.push(bytes);
              flush(socket);
            },
            closed() {
              socket.data.open = false;
              if (socket.data.backlog.length === 0) socket.end();
              else socket.data.backlog.push(Buffer.alloc(0));
            },
          });
        },
        data(socket, bytes) {
          if (socket.data.open) sandbox.write(socket.data.id as number, bytes);
          else socket.data.queue.push(Buffer.from(bytes));
        },
        drain(socket) {
          flush(socket);
        },
        close(socket) {
          if (socket.data.id !== undefined) sandbox.end(socket.data.id);
        },
        error() {},
      },
    });
    this.relays.set(port, { path, listener });
    return path;
  }

  private closeOne(port: number): void {
    const relay = this.relays.get(port);
    if (!relay) return;
    this.relays.delete(port);
    relay.listener.stop(true);
    rmSync(relay.path, { force: true });
  }

  close(): void {
    for (const port of [...this.relays.keys()]) this.closeOne(port);
  }
}

/** Writes what the client's socket takes; an empty buffer in the backlog means "end after this". */
function flush(socket: Socket<Link>): void {
  const backlog = socket.data.backlog;
  while (backlog.length > 0) {
    const next = backlog[0] as Buffer;
    if (next.length === 0) {
      backlog.length = 0;
      socket.end();
      return;
    }
    const written = socket.write(next);
    if (written < next.length) {
      backlog[0] = next.subarray(Math.max(written, 0));
      return;
    }
    backlog.shift();
  }
}
