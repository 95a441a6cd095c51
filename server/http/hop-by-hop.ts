/**
 * The headers that describe one connection, not the message (RFC 9110 §7.6.1, plus the legacy
 * Proxy-Connection): every proxy in the server (the home forward, the sandbox preview, managed auth)
 * drops them before passing a request or an answer on.
 */
export const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];
