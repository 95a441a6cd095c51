/** The paging fields every list of the family answers: `total`, and `has_more` when a later page exists. */
import type { Page } from "../../http/paging.ts";

export function pageInfo(page: Page, shown: number, total: number) {
  return { total, has_more: page.offset + shown < total };
}
