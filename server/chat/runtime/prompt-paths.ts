/**
 * The system prompt as the model receives it: pi builds it with the server's own paths in two places,
 * which tell a provider (and anyone reading the model's output) where the server keeps its data and
 * its code, and which the model's tools could not use anyway:
 * - "Current working directory: <path>": in local mode the workspace's absolute path under the data
 *   dir. The tools and the shell already work in the workspace, so it is shown as `.`; in protected
 *   mode it is the sandbox's own path and stays.
 * - "Pi documentation (...)": absolute paths of pi's README, docs and examples in the server's
 *   install, outside every folder the model's tools reach. The section is left out.
 * Context files, skills and prompts already carry the model's own paths (resources.ts).
 */

const PI_DOCS = /\n\nPi documentation \(read only when[^\n]*(?:\n- [^\n]*)*/;

export function modelFacingPrompt(prompt: string, paths: { cwd: string; shownCwd: string }): string {
  const line = `\nCurrent working directory: ${paths.cwd}`;
  const at = prompt.lastIndexOf(line);
  const withCwd =
    at === -1 || paths.cwd === paths.shownCwd
      ? prompt
      : `${prompt.slice(0, at)}\nCurrent working directory: ${paths.shownCwd}${prompt.slice(at + line.length)}`;
  return withCwd.replace(PI_DOCS, "");
}
