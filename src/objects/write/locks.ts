/**
 * Object locks (PROTOCOL.md 6.7): one entry per locked object in the key-value store, so every
 * instance sharing it sees the same lock. A lock names its session and ends with it (a lock whose
 * session is gone counts as none), or when its minutes are up.
 */
import type { Session } from '../../auth/sessions.js';
import type { WriteContext } from './context.js';
import { ApiError } from '../../http/errors.js';
import { kvKeys } from '../../storage/keys.js';
import { formatStoreTime } from '../read/index.js';

export const MAX_LOCK_MINUTES = 240;
export const DEFAULT_LOCK_MINUTES = 15;

/** A lock as stored. */
export interface ObjectLock {
  /** The holding session's id. */
  session: string;
  /** Its user name. */
  user: string;
  /** When it was taken (epoch ms). */
  since: number;
}

/** The lock on `objectId` that still counts (its session lives), and the exact stored text. */
export async function currentLock(ctx: WriteContext, objectId: string): Promise<{ lock: ObjectLock; raw: string } | undefined> {
  const raw = await ctx.kv.get(kvKeys.lock(objectId));
  return raw === undefined ? undefined : liveLock(ctx, raw);
}

/** A stored lock, unless its session has ended (then so has the lock; its entry is replaced by the next taker). */
async function liveLock(ctx: WriteContext, raw: string): Promise<{ lock: ObjectLock; raw: string } | undefined> {
  const lock = JSON.parse(raw) as ObjectLock;
  return (await ctx.sessions.isLive(lock.session)) ? { lock, raw } : undefined;
}

/** What `GET /v1/lock/object/{id}` says of a lock. */
export function lockMessage(lock: ObjectLock): string {
  return `locked by ${lock.user} since ${formatStoreTime(lock.since)}`;
}

/** `423` when another session holds a lock on `objectId` (the write path asks before every write and delete). */
export async function checkUnlocked(ctx: WriteContext, session: Session | undefined, objectId: string): Promise<void> {
  const raw = await ctx.kv.get(kvKeys.lock(objectId));
  if (raw === undefined) return; // the common case: one read
  const held = (JSON.parse(raw) as ObjectLock).session === session?.id ? undefined : await liveLock(ctx, raw);
  if (held) throw new ApiError('423', `this object is ${lockMessage(held.lock)}`);
}

/** Takes or renews this session's lock for `minutes` (`423` when another session holds it). */
export async function takeLock(ctx: WriteContext, session: Session, objectId: string, minutes: number): Promise<ObjectLock> {
  const key = kvKeys.lock(objectId);
  for (let attempt = 0; attempt < 5; attempt++) {
    const raw = await ctx.kv.get(key);
    const held = raw === undefined ? undefined : await liveLock(ctx, raw);
    if (held && held.lock.session !== session.id) throw new ApiError('423', `this object is ${lockMessage(held.lock)}`);
    const lock: ObjectLock = held?.lock ?? { session: session.id, user: session.user, since: ctx.now() };
    // a lock never outlives its session
    const ttl = Math.max(1000, Math.min(minutes * 60_000, session.expiresAt - ctx.now()));
    // one atomic step: of two sessions taking a free (or dead) lock, one wins
    if (await ctx.kv.compareAndSet(key, raw, JSON.stringify(lock), ttl)) return lock;
  }
  throw new ApiError('423', 'this object is being locked by another session; try again');
}

/** Releases this session's lock (another session's stays: `423`). Answers whether there was one. */
export async function releaseLock(ctx: WriteContext, session: Session, objectId: string): Promise<boolean> {
  const held = await currentLock(ctx, objectId);
  if (!held) return false;
  if (held.lock.session !== session.id) throw new ApiError('423', `this object is ${lockMessage(held.lock)}`);
  return ctx.kv.delete(kvKeys.lock(objectId));
}
