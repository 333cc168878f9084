import { fileURLToPath } from 'node:url';

// The example imports ../demo-service.mjs and the odbrest package from the repository root, so the
// bundler's root is the repository (where node_modules is), not this folder.
const root = fileURLToPath(new URL('../..', import.meta.url));

/** @type {import('next').NextConfig} */
export default {
  turbopack: { root },
  outputFileTracingRoot: root,
};
