import type { LRUCache } from 'lru-cache';
import { lruCache } from '../caches.js';
import { andThen, type MaybePromise } from '../maybe.js';
import { ApiError } from '../http/errors.js';
import { randomToken } from '../storage/ids.js';
import { kvKeys } from '../storage/keys.js';
import type { KeyValueStore, ObjectStore } from '../storage/types.js';

/** How a session was made; it accepts only that kind of credential (PROTOCOL.md 2.3). */
export type SessionKind = 'session' | 'token' | 'secure';

export interface Session {
  id: string;
  kind: SessionKind;
  /** Object id of the logged-in principal (a database user, or a `/v1/auth/df` principal). */
  principalId: string;
  /** User name as logged in. */
  user: string;
  /** `db` for database users, `df` for custom-login principals. */
  principal: 'db' | 'df';
  appNames: string[];
  createdAt: number;
  /** Absolute end of the session (epoch ms); the idle timeout is the store entry's TTL. */
  expiresAt: number;
  /** Extra per-kind state (the secure transport keeps its key here; its replay window is a record of its own, `kvKeys.replayWindow`). */
  extra?: Record<string, unknown>;
  /** The session a `340` answer gives (PROTOCOL.md 2.6): it may only call `/v1/2fa/*` and `/v1/logout`. */
  twoFactorSetupOnly?: true;
  /** Where the login came from, for the user's list of sessions (PROTOCOL.md 2.8). */
  client?: SessionClient;
  /**
   * What the session's writes reached in the object store (`ObjectStore.inSession`): every instance
   * answers its reads with at least those writes. Absent before its first write.
   */
  position?: string;
}

/** The client address and the login body's `device` member of the login that made a session. */
export interface SessionClient {
  address: string | null;
  device: unknown;
}

/** A session and the exact string stored for it (what a compare-and-set compares). */
export interface StoredSession {
  session: Session;
  raw: string;
}

export type NewSession = Omit<Session, 'id' | 'createdAt' | 'expiresAt'>;

/** The `session` service option. */
export interface SessionOptions {
  /** Idle timeout of a session, renewed by each authenticated request. Default 30 minutes. */
  idleTimeoutMs?: number;
  /** Absolute lifetime of a session. Default 12 hours. */
  absoluteTimeoutMs?: number;
  /** HS256 key for `/v2/login` tokens (at least 32 bytes). Default: random per process. */
  jwtSecret?: string | Uint8Array;
  /** Live sessions one principal may hold; a login beyond it ends that principal's oldest session. Default 1000. */
  maxPerUser?: number;
}

export interface SessionLimits {
  idleMs: number;
  absoluteMs: number;
  maxPerUser: number;
}

export function sessionLimits(options: SessionOptions = {}): SessionLimits {
  const maxPerUser = options.maxPerUser ?? 1000;
  if (!Number.isSafeInteger(maxPerUser) || maxPerUser < 1) throw new Error('session.maxPerUser must be a positive integer');
  return { idleMs: options.idleTimeoutMs ?? 30 * 60_000, absoluteMs: options.absoluteTimeoutMs ?? 12 * 3_600_000, maxPerUser };
}

const key = kvKeys.session;
/** Slots of the per-user cap kept in one key-value entry. */
const SLOTS_PER_PAGE = 32;

/** Sessions in the KeyValueStore, one JSON entry each, keyed so that a session's keys share a slot. */
export class SessionStore {
  /**
   * Parsed sessions of this process, reused while the store holds the very same stored form (the
   * store stays the authority: any change there is a different string and is parsed again). Frozen,
   * because one parsed session serves many requests.
   */
  readonly #parsed: LRUCache<string, { raw: string; session: Session }>;

  constructor(
    private readonly kv: KeyValueStore,
    private readonly times: SessionLimits,
    private readonly now: () => number,
    cacheSize: number,
    /** Told of each session started (+1) and ended (-1) here, for the `odbrest.session.active` metric. */
    private readonly counted: (change: 1 | -1) => void = () => undefined,
  ) {
    this.#parsed = lruCache(cacheSize);
  }

  #parse(id: string, raw: string): Session {
    const cached = this.#parsed.get(id);
    if (cached?.raw === raw) return cached.session;
    const session = deepFreeze(JSON.parse(raw) as Session);
    this.#parsed.set(id, { raw, session });
    return session;
  }

  /** A new session id (CSPRNG). `prepare` takes one made in advance, so a login can seal it while other work runs. */
  newId(): string {
    return randomToken(16);
  }

  /** A new session starting now, not yet stored (`save` stores it); a login can build its answer first. */
  prepare(fields: NewSession, id = this.newId()): Session {
    const createdAt = this.now();
    return { ...fields, id, createdAt, expiresAt: createdAt + this.times.absoluteMs };
  }

  /**
   * Stores a session made by `prepare`, and counts it among its principal's: when that makes more than
   * `maxPerUser`, the oldest ends.
   */
  async save(session: Session): Promise<void> {
    await this.kv.set(key(session.id), JSON.stringify(session), this.#ttl(session));
    const ended = await this.#counted(session).catch(async (error: unknown) => {
      await this.delete(session.id);
      throw error;
    });
    this.counted(1);
    if (ended !== undefined) await this.delete(ended);
  }

  /**
   * Gives the session its principal's next login number `n` and puts it in slot `n mod maxPerUser`;
   * returns the session that held that slot, the one `maxPerUser` logins older, which ends. Slots are
   * kept `SLOTS_PER_PAGE` to an entry, so a login rewrites one small page whatever the number of
   * sessions (a list of them all, rewritten per login, cost 0.3 ms at 1000 sessions and sent 40 KB
   * twice to a shared store), and a session costs the store a few dozen bytes, not an entry.
   * Every session of a principal gets the same lifetime, so they expire in login order and ending the
   * session `maxPerUser` logins back ends the oldest still alive beyond the cap, as a list would.
   * Logged-out sessions keep their slot until it comes round again.
   */
  async #counted(session: Session): Promise<string | undefined> {
    const lifetime = Math.max(1, session.expiresAt - this.now());
    const counter = kvKeys.loginsOf(session.principalId);
    const n = await this.kv.increment(counter, lifetime);
    await this.kv.expire(counter, lifetime); // a counter that started over could skip a live session's slot
    const slot = n % this.times.maxPerUser;
    const pageKey = kvKeys.loginSlots(session.principalId, Math.floor(slot / SLOTS_PER_PAGE));
    const at = slot % SLOTS_PER_PAGE;
    for (let attempt = 0; attempt < 100; attempt++) {
      const raw = await this.kv.get(pageKey);
      const page = raw === undefined ? [] : (JSON.parse(raw) as Array<string | null>);
      const held = page[at] ?? undefined;
      const space = held === undefined ? -1 : held.indexOf(' ');
      // a login `maxPerUser` later got there first (more logins at once than the cap): this one is the oldest
      if (held !== undefined && Number(held.slice(0, space)) > n) break;
      while (page.length < at) page.push(null);
      page[at] = `${n} ${session.id}`;
      if (await this.kv.compareAndSet(pageKey, raw, JSON.stringify(page), lifetime)) return held?.slice(space + 1);
    }
    throw new ApiError('503', 'too many logins of this user at once, retry later');
  }

  /**
   * The live session with this id, its idle timeout renewed; `undefined` if unknown or expired. The
   * read and the renewal are one store operation. The new lifetime ends no later than the session
   * (`#ttl`), which only the stored value tells: it is taken from the session this process last
   * parsed, or else assumed a whole idle timeout away, and set again in the rare case that was wrong
   * (a session met for the first time here within its last idle timeout).
   */
  async touch(id: string): Promise<Session | undefined> {
    return this.touchNow(id);
  }

  /** `touch`, answered without a promise when the key-value store has the session at hand (`getAndExpireNow`). */
  touchNow(id: string): MaybePromise<Session | undefined> {
    if (!validId(id)) return undefined;
    const known = this.#parsed.get(id)?.session;
    const ttl = known ? this.#ttl(known) : this.times.idleMs;
    const raw = this.kv.getAndExpireNow ? this.kv.getAndExpireNow(key(id), ttl) : this.kv.getAndExpire(key(id), ttl);
    return andThen(raw, (raw) => this.#touched(id, raw, known, ttl));
  }

  #touched(id: string, raw: string | undefined, known: Session | undefined, ttl: number): MaybePromise<Session | undefined> {
    if (raw === undefined) return undefined;
    const session = this.#parse(id, raw);
    if (session.expiresAt <= this.now()) return this.#ended(id).then(() => undefined);
    if (session.expiresAt !== known?.expiresAt) {
      const exact = this.#ttl(session);
      // either lifetime ends with its session rather than an idle timeout away: they differ
      if (exact < this.times.idleMs || ttl < this.times.idleMs) return this.kv.expire(key(id), exact).then(() => session);
    }
    return session;
  }

  /** The session and its raw stored form (for `update`), without renewing it. */
  async read(id: string): Promise<StoredSession | undefined> {
    return validId(id) ? this.#live(id, await this.kv.get(key(id))) : undefined;
  }

  /** The session stored as `raw`, unless absent or past its absolute end (then it is deleted). */
  async #live(id: string, raw: string | undefined): Promise<StoredSession | undefined> {
    if (raw === undefined) return undefined;
    const session = this.#parse(id, raw);
    if (session.expiresAt <= this.now()) {
      await this.#ended(id);
      return undefined;
    }
    return { session, raw };
  }

  /** Deletes a session found past its absolute end. */
  async #ended(id: string): Promise<void> {
    if (await this.kv.delete(key(id))) this.counted(-1);
  }

  /**
   * Atomic read-modify-write: `change` gets the current session (frozen: it returns a new one, never
   * changes it) and returns the new one, or throws to abort; retried when another request changed the
   * session in between. It starts from the parsed session this process holds, when it has one: while
   * the store still holds exactly that stored form (typically the one last written here), the
   * compare-and-set alone reads and writes it (one store operation instead of two); when anything
   * else changed, deleted or expired it, the compare-and-set fails and the store is read. The
   * compare-and-set stays the authority: a stale entry only costs a failed attempt.
   */
  async update(id: string, change: (session: Session) => Session): Promise<Session> {
    let found = this.#cached(id);
    for (let attempt = 0; attempt < 100; attempt++) {
      found ??= await this.read(id);
      if (!found) throw new ApiError('201', 'session expired or logged out');
      const next = deepFreeze(change(found.session));
      const raw = JSON.stringify(next);
      if (await this.kv.compareAndSet(key(id), found.raw, raw, this.#ttl(next))) {
        this.#parsed.set(id, { raw, session: next });
        return next;
      }
      found = undefined;
    }
    throw new ApiError('503', 'session is too busy, retry later');
  }

  /**
   * Runs `work`, a request of `session`, so that its reads reflect the session's writes on any instance
   * (when the store supports it, `ObjectStore.inSession`), and keeps the position its writes reached
   * in the session record before it settles (the next request, wherever it goes, reads it with the
   * session: no extra round trip for reads).
   */
  consistent<T>(store: ObjectStore, session: Session, work: () => MaybePromise<T>): MaybePromise<T> {
    if (!store.inSession) return work();
    return store.inSession(session.position, async () => work(), async (position) => {
      if (session.position !== undefined && session.position >= position) return;
      try {
        await this.update(session.id, (current) => (current.position !== undefined && current.position >= position ? current : { ...current, position }));
      } catch (error) {
        // the session ended meanwhile (a logout, the per-user cap): nothing to keep it for
        if (!(error instanceof ApiError && error.code === '201')) throw error;
      }
    });
  }

  /** The parsed session this process last read or wrote, unless it has expired (the store is not asked). */
  #cached(id: string): StoredSession | undefined {
    const cached = this.#parsed.get(id);
    return cached !== undefined && cached.session.expiresAt > this.now() ? cached : undefined;
  }

  /**
   * The ids in the slots of a principal's last `maxPerUser` logins (PROTOCOL.md 2.8 lists and ends a
   * user's sessions from them): every live session of the principal is among them, beside ids of
   * sessions that ended since (`read` tells which live).
   */
  async slotIds(principalId: string): Promise<string[]> {
    const logins = Number((await this.kv.get(kvKeys.loginsOf(principalId))) ?? 0);
    if (!Number.isSafeInteger(logins) || logins <= 0) return [];
    const slots = Math.min(logins + 1, this.times.maxPerUser);
    const pages = await Promise.all(
      Array.from({ length: Math.ceil(slots / SLOTS_PER_PAGE) }, (_, index) => this.kv.get(kvKeys.loginSlots(principalId, index))),
    );
    const ids: string[] = [];
    for (const raw of pages) {
      if (raw === undefined) continue;
      for (const held of JSON.parse(raw) as Array<string | null>) if (held) ids.push(held.slice(held.indexOf(' ') + 1));
    }
    return ids;
  }

  /**
   * When a live session was last used (epoch ms), read from its remaining lifetime rather than
   * written on every request: each use sets it to the idle timeout (or to what is left of the absolute
   * lifetime, when less; then the answer is the earliest it can have been).
   */
  async lastUsed(session: Session): Promise<number> {
    const now = this.now();
    const remaining = await this.kv.ttl(key(session.id));
    return Math.min(now, Math.max(session.createdAt, now - this.times.idleMs + remaining));
  }

  /**
   * Whether the session's record is gone from the store (logged out, timed out, deleted by another
   * process or instance): one lifetime read (Redis `PTTL`), nothing parsed, nothing renewed.
   */
  async gone(id: string): Promise<boolean> {
    return (await this.kv.ttl(key(id))) <= 0;
  }

  /** Whether a session with this id lives (neither logged out nor timed out); its idle timeout is not renewed. */
  async isLive(id: string): Promise<boolean> {
    return (await this.read(id)) !== undefined;
  }

  async delete(id: string): Promise<boolean> {
    this.#parsed.delete(id);
    // a secure session's replay window goes with it (any other session has none: the delete is a no-op)
    const [deleted] = await Promise.all([this.kv.delete(key(id)), this.kv.delete(kvKeys.replayWindow(id))]);
    if (deleted) this.counted(-1);
    for (const listener of this.#endListeners) listener(id);
    return deleted;
  }

  readonly #endListeners = new Set<(id: string) => void>();

  /** Calls `listener` with the id of every session ended here (logout, revocation, the per-user cap): event streams end with it. */
  onEnd(listener: (id: string) => void): void {
    this.#endListeners.add(listener);
  }

  #ttl(session: Session): number {
    return Math.max(1, Math.min(this.times.idleMs, session.expiresAt - this.now()));
  }
}

function validId(id: string): boolean {
  return id.length > 0 && id.length <= 256;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
