/**
 * A minimal client of the agents WebSocket (`/v1/chat`), used by docs/agents.md's "Try it":
 *
 *   npx bun docs/examples/agent-chat.ts agent|fleet <id> "message"
 *
 * It connects to `$ATRIUM` (default http://127.0.0.1:8000), waits for `connected`, sends the message,
 * prints each frame's agent and text as the reply streams, ends the session after the last frame and
 * exits 0; an `error` frame, a refused connection or 60 s without an answer exit 1.
 */
const [targetType, targetId, message] = process.argv.slice(2);
if (!targetType || !targetId || !message) {
  console.error('usage: npx bun docs/examples/agent-chat.ts agent|fleet <id> "message"');
  process.exit(2);
}
const base = (process.env.ATRIUM ?? "http://127.0.0.1:8000").replace(/^http/, "ws");
const url = `${base}/v1/chat?target_type=${encodeURIComponent(targetType)}&target_id=${encodeURIComponent(targetId)}`;

interface Frame {
  type: string;
  session_id?: string;
  /** A `stream` frame's piece of the reply. */
  chunk?: string;
  /** A `response` frame's whole reply. */
  content?: string;
  is_complete?: boolean;
  code?: string;
  message?: string;
  metadata?: { agent_name?: string };
}

const ws = new WebSocket(url);
const deadline = setTimeout(() => fail("no answer within 60 s"), 60_000);
let speaker: string | undefined;

function fail(why: string): never {
  console.error(`\nagent-chat: ${why}`);
  process.exit(1);
}

ws.onmessage = (event) => {
  const frame = JSON.parse(String(event.data)) as Frame;
  if (frame.type === "connected") {
    console.log(`connected: session ${frame.session_id}`);
    ws.send(JSON.stringify({ type: "message", content: message }));
  } else if (frame.type === "stream" || frame.type === "response") {
    const name = frame.metadata?.agent_name;
    if (name && name !== speaker) {
      speaker = name;
      process.stdout.write(`\n[${name}] `);
    }
    process.stdout.write(frame.chunk ?? frame.content ?? "");
    if (frame.type === "response" || frame.is_complete) ws.send(JSON.stringify({ type: "end_session" }));
  } else if (frame.type === "session_ended") {
    console.log("\nsession ended");
  } else if (frame.type === "error") {
    fail(`${frame.code}: ${frame.message}`);
  }
};
ws.onclose = (event) => {
  clearTimeout(deadline);
  if (event.code !== 1000) fail(`closed with ${event.code} ${event.reason}`);
  process.exit(0);
};
ws.onerror = () => fail(`cannot connect to ${url}`);
