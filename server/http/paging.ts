/** The page a list request asks for: `limit` and `offset` with the defaults of the shared Paging schema. */
import { PAGE_LIMIT } from "../../schemas/common.ts";

export interface Page {
  limit: number;
  offset: number;
}

export function pageOf(query: { limit?: number; offset?: number }): Page {
  return { limit: query.limit ?? PAGE_LIMIT.default, offset: query.offset ?? 0 };
}
