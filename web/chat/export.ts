/** Export a conversation as Markdown or JSON: built in the browser and saved through a blob link. */
import type { ToolPart, UiMessage } from "../../schemas/chat.ts";
import { isError, isText, toolName } from "./messages.ts";

export function toMarkdown(title: string, messages: UiMessage[]): string {
  const out = [`# ${title}`, ""];
  for (const m of messages) {
    out.push(`## ${m.role === "user" ? "You" : "Assistant"}`, "");
    for (const p of m.parts) {
      if (isText(p)) {
        if (p.text) out.push(p.text, "");
      } else if (isError(p)) out.push(`> **Error:** ${p.message}`, "");
      else if (p.type === "tool-Thinking")
        out.push(
          `<details><summary>Thought</summary>\n\n${String((p as ToolPart).output ?? "")}\n\n</details>`,
          "",
        );
      else {
        const t = p as ToolPart;
        out.push(
          `**Tool ${toolName(t)}** (${t.state ?? ""})`,
          "",
          "```json",
          JSON.stringify({ input: t.input, output: t.output }, null, 2),
          "```",
          "",
        );
      }
    }
  }
  return out.join("\n");
}

export function toJson(session: Record<string, unknown>, title: string, messages: UiMessage[]): string {
  return JSON.stringify({ title, ...session, exportedAt: new Date().toISOString(), messages }, null, 2);
}

export function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
