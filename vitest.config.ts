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
  },
});
