/** The UI placeholder: shows whether the server is ready, from /health/ready. */

interface Ready {
  status: string;
  version: string;
  mode: string;
}

async function showStatus(): Promise<void> {
  const status = document.getElementById("status");
  const version = document.getElementById("version");
  if (!status || !version) return;
  try {
    const response = await fetch("/health/ready", { headers: { accept: "application/json" } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const ready = (await response.json()) as Ready;
    status.textContent = `ready (${ready.mode} mode)`;
    status.dataset.state = "ready";
    version.textContent = ready.version;
  } catch (error) {
    status.textContent = `not ready: ${(error as Error).message}`;
    status.dataset.state = "error";
  }
}

void showStatus();
