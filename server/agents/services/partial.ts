/** Partial updates (PATCH): the fields that were given; undefined ones leave the record as it is. */
export function definedOnly<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;
}
