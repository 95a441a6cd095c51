/** The path of a request URL without building a URL object (hooks run this on every request). */
export function pathOf(request: Request): string {
  const url = request.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  let end = start;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 63 /* ? */ || c === 35 /* # */) break;
    end++;
  }
  return url.slice(start, end);
}
