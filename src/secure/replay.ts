import { base64 } from '@scure/base';

/**
 * The 64-wide sliding replay window of PROTOCOL.md 4: a message number is accepted once, and only if
 * it is greater than the highest accepted number minus 64, so concurrent requests may arrive out of
 * order. Kept as a record of its own in the key-value store (`window-updates.ts`), the 64-bit mask as
 * a hex string.
 */
export const WINDOW_SIZE = 64;

export interface ReplayWindow {
  /** Highest accepted message number (0 before the first). */
  high: number;
  /** Bit i set: `high - i` was accepted. */
  seen: string;
}

export const emptyWindow = (): ReplayWindow => ({ high: 0, seen: '0' });

/**
 * What a secure-login session keeps in `session.extra`. Here, beside the window, so the transport
 * and the window updates share it without importing each other.
 */
export type SecureSessionState = {
  /** `symmetricKey`: standard base64 of the 32-byte AES-256 key K. */
  key: string;
};

export function newSecureState(key: Uint8Array): SecureSessionState {
  return { key: base64.encode(key) };
}

/**
 * A session's window as stored: `high seen end`, where `end` is when the session ends (epoch ms), so
 * every write can give the record the session's remaining lifetime without reading the session.
 */
export interface WindowRecord {
  window: ReplayWindow;
  end: number;
}

export function encodeWindowRecord({ window, end }: WindowRecord): string {
  return `${window.high} ${window.seen} ${end}`;
}

/** The record stored as `raw`; `undefined` for anything else (a record that cannot be read accepts nothing). */
export function decodeWindowRecord(raw: string): WindowRecord | undefined {
  const [high, seen, end, extra] = raw.split(' ');
  if (extra !== undefined || !/^[0-9]+$/.test(high ?? '') || !/^[0-9a-f]{1,16}$/.test(seen ?? '') || !/^[0-9]+$/.test(end ?? '')) return undefined;
  return { window: { high: Number(high), seen: seen! }, end: Number(end) };
}

const MASK = (1n << BigInt(WINDOW_SIZE)) - 1n;

/** The window after accepting `n`, or why `n` is refused. */
export function acceptCounter(window: ReplayWindow, n: number): { window: ReplayWindow } | { refused: 'replayed' | 'out of window' } {
  const seen = BigInt(`0x${window.seen}`);
  if (n > window.high) {
    const shift = BigInt(Math.min(n - window.high, WINDOW_SIZE));
    return { window: { high: n, seen: (((seen << shift) | 1n) & MASK).toString(16) } };
  }
  const offset = window.high - n;
  if (offset >= WINDOW_SIZE) return { refused: 'out of window' };
  const bit = 1n << BigInt(offset);
  if (seen & bit) return { refused: 'replayed' };
  return { window: { high: window.high, seen: (seen | bit).toString(16) } };
}
