import { defineConfig } from 'tsup';

/** One entry per public subpath (package.json "exports" lists the same names). */
export const entries = {
  index: 'src/index.ts',
  node: 'adapters/node.ts',
  cli: 'src/cli/main.ts',
};

export default defineConfig({
  entry: entries,
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  platform: 'neutral',
  external: [/^node:/],
  splitting: true,
  treeshake: true,
});
