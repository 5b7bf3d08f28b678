const harness = new URL("./harness.mjs", import.meta.url).href;
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (/\/tests\/test\.js$/.test(r.url)) return { ...r, url: harness };
  return r;
}
