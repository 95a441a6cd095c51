/**
 * The window's only bridge to the desktop shell, exposed as `window.atrium` in an isolated world: the
 * app's version and opening a web link in the system browser. Nothing else of Electron or Node reaches
 * the page. Runs sandboxed, so it is bundled to one CommonJS file that requires only "electron".
 */
import { contextBridge, ipcRenderer } from "electron";

export interface AtriumBridge {
  /** The desktop app's version. */
  version(): Promise<string>;
  /** Opens an http(s) or mailto link in the system's browser or mail app. */
  openExternal(url: string): Promise<void>;
}

const bridge: AtriumBridge = {
  version: () => ipcRenderer.invoke("atrium:version") as Promise<string>,
  openExternal: async (url) => {
    await ipcRenderer.invoke("atrium:open-external", String(url));
  },
};

contextBridge.exposeInMainWorld("atrium", bridge);
