/**
 * The reference for bench/http.ts's cold start: a bare `Bun.serve` process, started the way the server
 * is (`--port 0 --data-dir DIR`, the data dir ignored), printing the same `listening on URL` line and
 * answering 200 to everything, /health/ready included. Spawn to its first 200 is what any Bun server
 * pays on this machine at this moment (process start, the runtime, a socket); the server's figure less
 * this one is Atrium's own start-up.
 */
const at = process.argv.indexOf("--port");
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: at >= 0 ? Number(process.argv[at + 1]) : 0,
  fetch: () => Response.json({ status: "ready" }),
});
console.log(`listening on http://127.0.0.1:${server.port}`);
