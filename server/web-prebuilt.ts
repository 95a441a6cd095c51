/**
 * The UI script bundled ahead of time, or undefined when running from source (web.ts then bundles
 * web/main.ts on first request). scripts/build.ts replaces this module while compiling the binary with a
 * text import of the bundle it built, so the executable carries the UI inside it.
 */
export const PREBUILT_MAIN_JS: string | undefined = undefined;
