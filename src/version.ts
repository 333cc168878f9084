/** Replaced at build time with package.json's version (tsup.config.ts and vitest.config.ts `define`). */
declare const __ODBREST_VERSION__: string | undefined;

/** This package's version, read from package.json when it was built (no file access at run time). */
export const PACKAGE_VERSION: string = typeof __ODBREST_VERSION__ === 'string' ? __ODBREST_VERSION__ : '0.0.0-unbuilt';
