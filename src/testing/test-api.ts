import type { afterEach, describe, expect, it } from 'vitest';

/**
 * What the contract suites use of the test runner: vitest's `describe`, `it`, `expect` and
 * `afterEach`, handed in by the host (`import * as vitest from 'vitest'`), so the package never loads
 * vitest itself and works from ESM and CommonJS alike.
 */
export interface TestApi {
  describe: typeof describe;
  it: typeof it;
  expect: typeof expect;
  afterEach: typeof afterEach;
}
