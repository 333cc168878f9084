/**
 * Every key the service writes to the `KeyValueStore`, in one place. Braces mark the part Redis
 * Cluster hashes, so all keys of one session share a slot.
 */
export const kvKeys = {
  session: (id: string) => `sess:{${id}}`,
  /** How many logins one principal has made (for the per-user cap); it outlives every slot below. */
  loginsOf: (principalId: string) => `sess:user:{${principalId}}:n`,
  /** Page `index` of the slots of a principal's last `maxPerUser` logins (JSON: `"<login number> <session id>"` or null each). */
  loginSlots: (principalId: string, index: number) => `sess:user:{${principalId}}:${index}`,
  failedLoginsOfUser: (user: string) => `fail:user:${user.toLowerCase()}`,
  failedLoginsOfAddress: (address: string) => `fail:addr:${address}`,
  /** Wrong second-factor codes of a user (PROTOCOL.md 2.4): only a verified code clears them. */
  failedCodesOfUser: (user: string) => `fail:2fa:${user.toLowerCase()}`,
  externalLoginsOfAddress: (address: string) => `limit:oauth:${address}`,
  oauthState: (state: string) => `oauth:state:${state}`,
  dfUuid: (dfUuid: string) => `oauth:df:${dfUuid}`,
  /** A password reset token, by the SHA-256 of the token (PROTOCOL.md 2.8): whose it is, 15 minutes. */
  passwordReset: (tokenHash: string) => `reset:token:${tokenHash}`,
  /** The hash of a principal's newest reset token (a new token voids the older). */
  passwordResetOf: (principalId: string) => `reset:user:${principalId}`,
  /** Password reset requests per user name and per address within the hour. */
  resetsOfUser: (user: string) => `limit:reset:user:${user.toLowerCase()}`,
  resetsOfAddress: (address: string) => `limit:reset:addr:${address}`,
  /** A WebAuthn challenge (PROTOCOL.md 2.8), single use, 5 minutes. */
  passkeyChallenge: (challenge: string) => `passkey:challenge:${challenge}`,
  /** An unfinished file upload (PROTOCOL.md 6.6), for an hour. */
  upload: (uploadId: string) => `upload:${uploadId}`,
  /** The lock on an object (PROTOCOL.md 6.7): its holder, for the minutes asked. */
  lock: (objectId: string) => `lock:${objectId}`,
  /** A one-time ticket for `GET /v1/events` (PROTOCOL.md 8), 60 s: the session id it stands for. */
  eventTicket: (ticket: string) => `events:ticket:${ticket}`,
  /** Counter blocks a secure session's event streams took (PROTOCOL.md 8: the server's own counter range). */
  eventCounters: (sessionId: string) => `sess:{${sessionId}}:events`,
  /** A secure session's replay window (PROTOCOL.md 4), written at its login and updated per message; lives as long as the session. */
  replayWindow: (sessionId: string) => `sess:{${sessionId}}:window`,
};

/** One kind of state in the in-memory key-value store, with its own bound. */
export interface KvPartition {
  /** Most entries of this kind. */
  maxEntries: number;
  /**
   * When full: `evict` drops the least recently used entry of this kind; `refuse` fails the write of a
   * new key (answered `503`), so that live entries are never pushed out.
   */
  whenFull: 'evict' | 'refuse';
}

/**
 * The service's kinds of state by key prefix. Sessions are never evicted: a full store refuses new
 * logins instead. Failed-login counters are never evicted either (a flood of user names must not
 * reset the counter that protects a real user); unauthenticated one-time states may be.
 */
export const KV_PARTITIONS: Readonly<Record<string, KvPartition>> = {
  'sess:': { maxEntries: 1_000_000, whenFull: 'refuse' },
  'fail:': { maxEntries: 200_000, whenFull: 'refuse' },
  'limit:': { maxEntries: 200_000, whenFull: 'refuse' },
  'oauth:': { maxEntries: 100_000, whenFull: 'evict' },
  // one-time states a person can ask for again
  'reset:': { maxEntries: 100_000, whenFull: 'evict' },
  'passkey:': { maxEntries: 100_000, whenFull: 'evict' },
  // an upload in progress is never pushed out by others: a full store refuses new uploads instead
  'upload:': { maxEntries: 100_000, whenFull: 'refuse' },
  // a lock is never pushed out by others: a full store refuses new locks instead
  'lock:': { maxEntries: 200_000, whenFull: 'refuse' },
  'events:': { maxEntries: 100_000, whenFull: 'refuse' },
};
