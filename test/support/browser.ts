/**
 * Debian's Chromium for the browser tests, driven by playwright-core: where it is, whether the
 * machine has it (else the tests skip, saying how to install it), and a headless launch with the flags
 * this closed network needs (no background networking, updates or sync, which would be refused).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { requireOrSkip } from './servers.js';

export const CHROMIUM = '/usr/bin/chromium';

/** Whether Chromium is there; when it is not, the tests of `what` skip (or fail in CI, as `requireOrSkip` decides). */
export const browserAvailable = (what: string): boolean => existsSync(CHROMIUM) || requireOrSkip(`no browser at ${CHROMIUM} (apt-get install -y chromium)`, what);

/** A headless Chromium with a new, empty profile folder (the caller removes `userDataDir`). */
export async function launchChromium(): Promise<{ context: BrowserContext; userDataDir: string }> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'odbrest-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return { context, userDataDir };
}

/** Closes what `launchChromium` opened and removes its profile folder (either may be missing after a failed launch). */
export async function closeChromium(context: BrowserContext | undefined, userDataDir: string | undefined): Promise<void> {
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
}

/**
 * Closes a server a browser test started, its connections first: Chromium opens sockets ahead of
 * need that never send a request, and `close()` alone waits for Node's headers timeout (about 100 s).
 */
export function closeServer(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
