/**
 * Fresh ids for stored records: a family prefix (`ses`, `run`, `agent`, ...) and a random UUID. Turns'
 * ids carry the UUID's 32 hex digits (`ses_3f2a...`); agents' keep its dashes (`agent_3f2a...-...`), the
 * form they were issued in, so ids stored by earlier builds and new ones look alike.
 */
export function newId(prefix: string, form: "hex" | "uuid" = "hex"): string {
  const uuid = crypto.randomUUID();
  return `${prefix}_${form === "hex" ? uuid.replaceAll("-", "") : uuid}`;
}
