/** The path of a request URL without building a URL object (hooks run this on every request). */
export function pathOf(request: Request): string {
  const url = request.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  const end = query === -1 ? (hash === -1 ? url.length : hash) : query;
  return url.slice(start, end);
}
