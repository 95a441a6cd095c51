/**
 * Protected mode: who is signed in (`GET /api/auth/get-session`), and the sign-in / sign-up screen shown
 * instead of the app until someone is. The session is the HttpOnly cookie the server sets; the page
 * never sees the token. Local mode (the desktop, one user) never shows it.
 */
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { api } from "../lib/api.ts";

export interface Who {
  mode: "local" | "protected";
  user?: { email?: string; name?: string };
}

/** The server's mode and, in protected mode, the signed-in user (none: the sign-in screen shows). */
export async function whoIsThere(): Promise<Who> {
  const ready = await api<{ mode?: string }>("/health/ready").catch(() => ({ mode: "local" }));
  if (ready.mode !== "protected") return { mode: "local" };
  const session = await api<{ user?: Who["user"] } | null>("/api/auth/get-session").catch(() => null);
  return { mode: "protected", ...(session?.user ? { user: session.user } : {}) };
}

export async function signOut(): Promise<void> {
  await api("/api/auth/sign-out", { method: "POST" });
}

export function SignIn({ onSignedIn }: { onSignedIn(): void }): JSX.Element {
  const [signUp, setSignUp] = useState(false);
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [name, setName] = useState("");
  const [invite, setInvite] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const body = signUp
        ? { email, password, ...(name ? { name } : {}), ...(invite ? { inviteCode: invite } : {}) }
        : { email, password };
      await api(signUp ? "/api/auth/sign-up/email" : "/api/auth/sign-in/email", { method: "POST", body });
      onSignedIn();
    } catch (err) {
      setError((err as Error).message || (signUp ? "Sign up failed" : "Sign in failed"));
    } finally {
      setBusy(false);
    }
  };
  const field = (
    id: string,
    label: string,
    value: string,
    set: (v: string) => void,
    type: "text" | "email" | "password" = "text",
    auto = "",
  ) => (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type={type as "text"}
        autocomplete={auto || undefined}
        value={value}
        required={id === "auth-email" || id === "auth-password"}
        onInput={(e) => set((e.target as HTMLInputElement).value)}
      />
    </div>
  );
  return (
    <main class="view-pad signin">
      <form class="panel" onSubmit={(e) => void submit(e)} aria-labelledby="auth-title">
        <h1 id="auth-title">{signUp ? "Create an account" : "Sign in to Atrium"}</h1>
        {field("auth-email", "Email", email, setEmail, "email", "username")}
        {field(
          "auth-password",
          "Password",
          password,
          setPassword,
          "password",
          signUp ? "new-password" : "current-password",
        )}
        {signUp && field("auth-name", "Name (optional)", name, setName)}
        {signUp && field("auth-invite", "Invite code", invite, setInvite)}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="row">
          <button type="submit" class="btn btn-primary" disabled={busy}>
            {signUp ? "Sign up" : "Sign in"}
          </button>
          <button type="button" class="btn" onClick={() => setSignUp(!signUp)}>
            {signUp ? "I have an account" : "Create an account"}
          </button>
        </div>
      </form>
    </main>
  );
}
