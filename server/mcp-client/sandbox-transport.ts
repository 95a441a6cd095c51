/**
 * An MCP stdio transport whose server runs in the user's own sandbox (server/sandbox/users/): the
 * command starts there as a long-lived process, the SDK's JSON-RPC lines go to its stdin and come back
 * from its stdout through the sandbox's runner pipe. Nothing runs in the server process. A line longer
 * than `maxLineBytes` ends the server (a hostile one cannot fill the server's memory), and a command
 * that is not installed in the sandbox fails with a sentence saying so.
 */
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { SandboxProcess } from "../sandbox/users/provider-api.ts";

export type OpenProcess = (onData: (data: Buffer) => void) => Promise<SandboxProcess>;

/** `command args…` as one bash line, every word quoted; `exec` so the server is the process itself. */
export function shellLine(command: string, args: readonly string[]): string {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  return ["exec", ...[command, ...args].map(quote)].join(" ");
}

export class SandboxStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  private process: SandboxProcess | undefined;
  private readonly buffer: ReadBuffer;
  private closed = false;
  /** Why the server ended, once it has (a sentence for the user). */
  ended: Error | undefined;

  constructor(
    private readonly open: OpenProcess,
    private readonly command: string,
    maxLineBytes: number,
  ) {
    this.buffer = new ReadBuffer({ maxBufferSize: maxLineBytes });
  }

  async start(): Promise<void> {
    this.process = await this.open((data) => this.receive(data));
    void this.process.exited.then((code) => {
      this.ended ??= new Error(exitSentence(this.command, code));
      this.finish();
    });
  }

  private receive(data: Buffer): void {
    if (this.closed) return;
    try {
      this.buffer.append(data);
      for (let message = this.buffer.readMessage(); message; message = this.buffer.readMessage())
        this.onmessage?.(message);
    } catch (error) {
      // A line past the cap, or one that is not JSON-RPC: the server is not one we keep talking to.
      this.ended = new Error(`The MCP server '${this.command}' sent an invalid or oversized message`);
      this.onerror?.(error as Error);
      void this.close();
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed || !this.process) throw this.ended ?? new Error("the MCP server is not running");
    this.process.write(Buffer.from(serializeMessage(message)));
  }

  async close(): Promise<void> {
    this.process?.closeInput();
    this.process?.kill();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}

function exitSentence(command: string, code: number | null): string {
  if (code === 127) return `'${command}' is not installed in your sandbox (command not found)`;
  if (code === 126) return `'${command}' cannot be run in your sandbox (not executable)`;
  if (code === null) return `Your sandbox stopped while the MCP server '${command}' ran`;
  return `The MCP server '${command}' exited (code ${code})`;
}
