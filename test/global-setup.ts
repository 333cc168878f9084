/**
 * Tests that start real processes (the demo, framework servers, Bun, Deno) import the package by
 * name, which resolves to dist/. Build once before any test file runs, when dist/ is missing or older
 * than the sources, so `npm test` works on a fresh clone and never races a build against a test.
 */
import { buildIfStale } from '../scripts/build-if-stale.mjs';

export default function setup(): void {
  buildIfStale();
}
