/** A demo service with two-factor login on a clock the tests move, and the steps of an enrolment as a client takes them. */
import { expect } from 'vitest';
import type { Service, ServiceOptions } from '../../src/index.js';
import { call, demoService, login, loginBody, testClock, USERS, type CallResult } from '../helpers.js';
import { ConditionalObjectStore } from './conditional-store.js';
import { base32Decode, totpAt } from './rfc6238.js';

export const TWO_FACTOR_KEY = 'the key that seals two-factor secrets in these tests';
export const STEP = 30_000;
export const OK = { internalStatus: '0', statusMessage: 'ok' };

export type Clock = ReturnType<typeof testClock>;

/**
 * A demo service where `hr` has an optional policy (alice and bob hold it), with conditional writes
 * (`ConditionalObjectStore`: the memory store does not honour `ifStoreTime` yet). The clock starts 10
 * seconds into a time step, at the machine's time (the external login checks ID tokens against it).
 */
export async function twoFactorService(options: ServiceOptions = {}, policies: Record<string, 'optional' | 'forced'> = { hr: 'optional' }) {
  const clock = testClock(Math.floor(Date.now() / STEP) * STEP + 10_000);
  const service = await demoService({ store: new ConditionalObjectStore(), now: clock.now, twoFactor: { policies, key: TWO_FACTOR_KEY, issuer: 'odbrest test' }, ...options });
  return { service, clock };
}

export interface Enrolled {
  /** The TOTP secret's bytes. */
  key: Uint8Array;
  backupCodes: string[];
  /** The session that enrolled. */
  sessionId: string;
}

/** Enrols `user` for `app` with a session of their own and confirms it with the code of the current step; then moves the clock one step on (that code is used up). */
export async function enrol(service: Service, clock: Clock, user: keyof typeof USERS = 'alice', app = 'hr', sessionId?: string): Promise<Enrolled> {
  const sid = sessionId ?? (await login(service, user, ['crm']));
  const enrolment = await call(service, 'POST', `/v1/2fa/secret?app=${app}`, { headers: { sessionId: sid } });
  expect(enrolment.body.status).toEqual(OK);
  const key = base32Decode(enrolment.body.data.secret);
  const confirmed = await call(service, 'PATCH', `/v1/2fa/secret?app=${app}`, { headers: { sessionId: sid }, json: { token: totpAt(key, clock.now()) } });
  expect(confirmed.body).toEqual({ status: { internalStatus: '0', statusMessage: 'two-factor login confirmed' }, data: {} });
  clock.advance(STEP);
  return { key, backupCodes: enrolment.body.data.backupCodes, sessionId: sid };
}

/** `POST /v1/login` with a `2faToken` (absent when `undefined`). */
export function loginWithCode(service: Service, user: keyof typeof USERS, appNames: string[], token: string | undefined, clientAddress?: string): Promise<CallResult> {
  const json = token === undefined ? loginBody(user, USERS[user], appNames) : { ...loginBody(user, USERS[user], appNames), '2faToken': token };
  return call(service, 'POST', '/v1/login', { json, clientAddress });
}

/** A code of the same length and alphabet that is not `code`. */
export function wrongCode(code: string): string {
  return code.replace(/^./, (digit) => String((Number(digit) + 1) % 10));
}

/** Asserts an error envelope with exactly this code, HTTP status and message, and `data: {}`. */
export function expectRefusal(result: CallResult, code: string, httpStatus: number, message: string | RegExp): void {
  expect({ status: result.status, internalStatus: result.body?.status?.internalStatus, data: result.body?.data }, result.text).toEqual({ status: httpStatus, internalStatus: code, data: {} });
  expect(result.body.status.statusMessage).toMatch(message);
}

export const NEED_CODE = /^two-factor login is on for this user: send the code/;
export const WRONG_CODE = 'the two-factor code is wrong, expired or already used';
