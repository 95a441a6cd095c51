/** The application's name and version, read from package.json at build time (embedded when compiled). */
import pkg from "../package.json" with { type: "json" };

export const APP_NAME = "Atrium";
export const APP_VERSION: string = pkg.version;
