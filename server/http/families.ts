/**
 * Which API family a path belongs to (DESIGN.md, "The four API families"). The error envelope, the
 * 401 body and the docs tag follow from it.
 */

export type FamilyName = "chat" | "turns" | "search" | "agents";

const PREFIXES: [string, FamilyName][] = [
  ["/api/chat", "chat"],
  ["/api/workspace", "chat"],
  ["/api/sandbox", "chat"],
  ["/api/webhooks", "chat"],
  ["/api/auth", "chat"],
  ["/api/health", "chat"],
  ["/api/post-chat", "chat"],
  ["/api/attach", "chat"],
  ["/api/sessions", "turns"],
  ["/api/attachments", "turns"],
  ["/api/artifacts", "turns"],
  ["/api/files", "turns"],
  ["/api/volume", "turns"],
  ["/api/skills", "turns"],
  ["/api/runs", "turns"],
  ["/api/settings", "turns"],
  ["/health", "turns"],
  ["/search", "search"],
  ["/generate_questions", "search"],
  ["/monitor-debug", "search"],
  ["/v1", "agents"],
];

/** The family of a path, or undefined for paths outside every family (UI, Swagger, unknown). */
export function familyOf(path: string): FamilyName | undefined {
  if (path === "/") return "search";
  for (const [prefix, family] of PREFIXES) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return family;
  }
  return undefined;
}
