import { randomBytes } from 'node:crypto';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';

/** Who holds a lock file: what it says, as written by `FolderLock.take`. */
export interface LockHolder {
  pid: number;
  host: string;
  /** When it was taken, ISO 8601. */
  since: string;
}

/**
 * A second process asked for a store another holds. Two processes on one file store would each
 * keep their own view in memory and write over each other (issue 50, item 6).
 */
export class StoreLockedError extends Error {
  override readonly name = 'StoreLockedError';
  constructor(
    readonly lockFile: string,
    readonly holder: LockHolder,
    what: string,
  ) {
    super(
      `${what} is in use by process ${holder.pid} on ${holder.host} (since ${holder.since}); only one process may open it. ` +
        `Stop that process first, or make the change through the running server's HTTP routes (users: POST /v1/user). ` +
        `If process ${holder.pid} is gone, delete ${lockFile}.`,
    );
  }
}

/**
 * An exclusive lock for one process on a store's files: a lock file naming the holder's pid and host.
 * Node has no portable OS-level lock without native addons, so a crashed holder leaves its file
 * behind; a later `take` on the same host finds that pid gone and takes the lock over. The file is
 * written whole under another name and linked into place, which fails when one exists: nobody ever
 * reads a half-written holder, and of two processes starting at once exactly one gets the lock.
 */
export class FolderLock {
  private constructor(
    readonly path: string,
    private readonly content: string,
  ) {}

  /** Takes the lock at `path` (for `what`, named in the error), or throws `StoreLockedError`. */
  static async take(path: string, what: string): Promise<FolderLock> {
    const holder: LockHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
    const content = `${JSON.stringify(holder)}\n`;
    const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temp, content, { flag: 'wx' });
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          await link(temp, path);
          return new FolderLock(path, content);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
        const current = await readHolder(path);
        if (current === undefined) continue; // released meanwhile
        if (attempt > 0 || !isStale(current)) throw new StoreLockedError(path, current, what);
        // a holder on this host that is no longer running: its file goes, and the lock is taken again
        await unlink(path).catch(ignoreMissing);
      }
    } finally {
      await unlink(temp).catch(ignoreMissing);
    }
  }

  /** Gives the lock up (deletes the file, if it is still this holder's). */
  async release(): Promise<void> {
    if ((await readFile(this.path, 'utf8').catch(() => undefined)) === this.content) await unlink(this.path).catch(ignoreMissing);
  }
}

async function readHolder(path: string): Promise<LockHolder | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockHolder>;
    if (Number.isSafeInteger(parsed.pid) && typeof parsed.host === 'string') return { pid: parsed.pid!, host: parsed.host, since: String(parsed.since) };
  } catch {
    // not written by FolderLock
  }
  return { pid: 0, host: 'an unknown host', since: 'an unknown time' };
}

/** Whether `holder` is a process of this host that has ended (another host's cannot be checked). */
function isStale(holder: LockHolder): boolean {
  if (holder.host !== hostname() || holder.pid <= 0 || holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
}
