import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { versionDefine } from './tsup.config.js';

export default defineConfig({
  define: versionDefine,
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one on the 2-core machines the suite runs
    // on, where most files wait on servers, browsers and child processes rather than compute. Two
    // workers there: 589 s for the whole suite against 1,001 s with one (same commit, quiet machine).
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
