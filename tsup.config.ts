import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

/** package.json's version, compiled into the build (src/version.ts); the core never reads files. */
export const versionDefine = { __ODBREST_VERSION__: JSON.stringify(JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8')).version) };

/** One entry per public subpath (package.json "exports" lists the same names). */
export const entries = {
  index: 'src/index.ts',
  node: 'adapters/node.ts',
  express: 'adapters/express.ts',
  koa: 'adapters/koa.ts',
  bun: 'adapters/bun.ts',
  deno: 'adapters/deno.ts',
  next: 'adapters/next.ts',
  'next-instrumentation': 'adapters/next-instrumentation.ts',
  cli: 'src/cli/main.ts',
  'file-store': 'stores/file-store.ts',
  redis: 'stores/redis.ts',
  postgres: 'stores/postgres.ts',
  s3: 'stores/blob-s3.ts',
  client: 'src/client/index.ts',
  testing: 'src/testing/index.ts',
};

export default defineConfig({
  entry: entries,
  format: ['esm', 'cjs'],
  // `npm start` needs only the JavaScript: ODBREST_BUILD=js skips the declaration files, most of a build's time
  dts: process.env.ODBREST_BUILD !== 'js',
  sourcemap: false, // maps were 63% of the package; the sources are readable ES2022
  clean: true,
  target: 'es2022',
  platform: 'neutral',
  external: [/^node:/, 'ioredis', 'pg', 'vitest', 'aws4fetch'],
  removeNodeProtocol: false, // keep `node:` specifiers: Deno resolves built-ins only with the prefix
  splitting: true,
  treeshake: true,
  define: versionDefine, // `odbrest --version`, `_CheckService`
});
