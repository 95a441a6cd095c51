/**
 * Which family a request path belongs to, from the paths each family declares (server/family.ts): the
 * error envelope follows from it. Knows nothing about the families themselves, only their declarations.
 */

/** The paths a family owns: every path equal to or under a prefix, and exact paths (`GET /`). */
export interface FamilyPaths {
  prefixes: readonly string[];
  exact?: readonly string[];
}

/** A lookup from a path to the value declared for the family that owns it, or undefined for paths
 * outside every family (UI, Swagger, unknown). A prefix owns itself and what lies under `prefix/`. */
export function pathOwners<T>(
  declared: readonly { paths: FamilyPaths; value: T }[],
): (path: string) => T | undefined {
  const exact = new Map<string, T>();
  const prefixes: [string, T][] = [];
  for (const { paths, value } of declared) {
    for (const path of paths.exact ?? []) exact.set(path, value);
    for (const prefix of paths.prefixes) {
      exact.set(prefix, value);
      prefixes.push([`${prefix}/`, value]);
    }
  }
  return (path) => {
    const owner = exact.get(path);
    if (owner !== undefined) return owner;
    for (const [under, value] of prefixes) if (path.startsWith(under)) return value;
    return undefined;
  };
}
