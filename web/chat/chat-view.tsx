/** Chat: sessions, transcript and composer (built in the following commits). */
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api } from "../lib/api.ts";

export function ChatView(): JSX.Element {
  const [count, setCount] = useState<number | undefined>();
  useEffect(() => {
    api<{ sessions: unknown[] }>("/api/chat/sessions").then((r) => setCount(r.sessions.length), () => {});
  }, []);
  return <p class="empty">{count === undefined ? "Chat is loading." : `${count} conversations.`}</p>;
}
