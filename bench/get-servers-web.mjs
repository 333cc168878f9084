// The floor of core's GET over HTTP under Bun and Deno: the runtime's own server (`Bun.serve`,
// `Deno.serve`) answering the JSON text odbrest answers from a Map, the same bytes, started by
// core.bench.mjs as `bun bench/get-servers-web.mjs` or `deno run -A bench/get-servers-web.mjs`.
// ODBREST_BENCH_ANSWERS and ODBREST_BENCH_TYPE as for get-servers.mjs.
const env = globalThis.Deno ? globalThis.Deno.env.toObject() : process.env;
const answers = new Map(Object.entries(JSON.parse(env.ODBREST_BENCH_ANSWERS)));
const headers = { 'content-type': env.ODBREST_BENCH_TYPE };
const handler = (request) => {
  const url = request.url;
  const text = answers.get(url.slice(url.lastIndexOf('/') + 1));
  return text === undefined ? new Response(null, { status: 404 }) : new Response(text, { headers });
};
const port = Number(env.PORT ?? 0);
const listening = (port) => console.log(`bare listening on http://127.0.0.1:${port}`);
if (globalThis.Bun) listening(globalThis.Bun.serve({ port, hostname: '127.0.0.1', fetch: handler }).port);
else globalThis.Deno.serve({ port, hostname: '127.0.0.1', onListen: ({ port }) => listening(port) }, handler);
