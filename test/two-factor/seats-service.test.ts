/**
 * Licence seats through the service (PROTOCOL.md 2.7): in the demo, bob holds `shop` with one seat.
 * A login that would take one seat too many is `101` and takes nothing; logout, `/v1/license/release`
 * and the end of a session (its idle timeout too) give the seat back. On one instance with a moving
 * clock, and on two instances sharing Redis.
 */
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import type { Service } from '../../src/index.js';
import { RedisKeyValueStore } from '../../stores/redis.js';
import { call, demoService, expectError, loginBody, testClock, USERS, type CallResult } from '../helpers.js';
import { nodeKeyPair, nodeSecureLogin, secureCall } from '../secure/node-client.js';
import { deleteKeys, REDIS_URL, RUN_ID, serverAvailable } from '../support/servers.js';
import { expectRefusal, OK } from './support.js';

const SEATS_TAKEN = 'all 1 seats of the licence for application "shop" are taken';
const IDLE_MS = 30 * 60_000;

const bobLogin = (service: Service, appNames: string[] = ['shop'], path = '/v1/login') => call(service, 'POST', path, { json: loginBody('bob', USERS.bob, appNames) });
const sessionIdOf = (result: CallResult) => {
  expect(result.body?.status, result.text).toEqual(OK);
  return result.body.data.sessionId as string;
};

describe('one instance', () => {
  const clock = testClock();
  const service = () => demoService({ now: clock.now, session: { idleTimeoutMs: IDLE_MS } });

  test('the second login for a one-seat application is 101; applications without a seat count are not limited', async () => {
    const running = await service();
    sessionIdOf(await bobLogin(running));
    expectRefusal(await bobLogin(running), '101', 403, SEATS_TAKEN);
    expectRefusal(await bobLogin(running, ['crm', 'shop'], '/v2/login'), '101', 403, SEATS_TAKEN);
    sessionIdOf(await bobLogin(running, ['crm', 'hr']));
    sessionIdOf(await bobLogin(running, ['crm', 'hr']));
  });

  test('a 101 takes nothing and leaves no session; logout gives the seat back', async () => {
    const running = await service();
    const first = sessionIdOf(await bobLogin(running));
    expectRefusal(await bobLogin(running), '101', 403, SEATS_TAKEN);
    expect((await call(running, 'POST', '/v1/logout', { headers: { sessionId: first } })).body.status).toEqual({ internalStatus: '0', statusMessage: 'logged out' });
    const second = sessionIdOf(await bobLogin(running));
    expect((await call(running, 'GET', '/v1/object/CUS00001', { headers: { sessionId: second } })).body.status).toEqual(OK);
  });

  test('/v1/license/release gives the seat back, and the session no longer holds the application', async () => {
    const running = await service();
    const first = sessionIdOf(await bobLogin(running));
    const released = await call(running, 'POST', '/v1/license/release', { headers: { sessionId: first }, json: { appNames: ['shop'] } });
    expect(released.body).toEqual({ status: { internalStatus: '0', statusMessage: 'licences released' }, data: {} });
    expectError(await call(running, 'GET', '/v1/object/CUS00001', { headers: { sessionId: first } }), '307', 403);
    sessionIdOf(await bobLogin(running));
    expectRefusal(await call(running, 'POST', '/v1/license/release', { headers: { sessionId: first }, json: { appNames: 7 } }), '400', 400, 'appNames must be an array of strings or a string');
    expectError(await call(running, 'POST', '/v1/license/release', { json: { appNames: ['shop'] } }), '204', 401);
  });

  test('the seat is free again once the session timed out idle, or reached its end', async () => {
    const running = await service();
    sessionIdOf(await bobLogin(running));
    clock.advance(IDLE_MS - 1000);
    expectRefusal(await bobLogin(running), '101', 403, SEATS_TAKEN);
    clock.advance(IDLE_MS + 1000);
    const second = sessionIdOf(await bobLogin(running));
    for (let i = 0; i < 25; i++) {
      clock.advance(IDLE_MS - 1000);
      await call(running, 'GET', '/v1/object/CUS00001', { headers: { sessionId: second } }); // keeps it from idling out, past its 12 h
      if (i === 20) expectRefusal(await bobLogin(running), '101', 403, SEATS_TAKEN);
    }
    sessionIdOf(await bobLogin(running));
  });

  test('the secure login takes a seat too, and its logout gives it back', async () => {
    const running = await service();
    const secure = await nodeSecureLogin(running, nodeKeyPair(), { user: 'bob', appNames: ['shop'] });
    expectRefusal(await bobLogin(running), '101', 403, SEATS_TAKEN);
    expect((await secureCall(running, secure, 1, 'POST', '/v1/logout')).envelope.status).toEqual({ internalStatus: '0', statusMessage: 'logged out' });
    sessionIdOf(await bobLogin(running));
  });
});

const redisAvailable = await serverAvailable('Redis', 'licence seats on two instances sharing Redis');
const prefix = `odbrest-test:${RUN_ID}:seat-service:`;

describe.runIf(redisAvailable)('two instances sharing Redis', () => {
  const services: Service[] = [];
  afterEach(async () => {
    for (const service of services.splice(0)) await service.close();
  });
  afterAll(() => deleteKeys(prefix));

  /** Two instances on one Redis (one client each), a fresh key space per test. */
  async function pair(options: { idleTimeoutMs?: number } = {}): Promise<[Service, Service]> {
    const space = `${prefix}${crypto.randomUUID()}:`;
    const make = () =>
      demoService({
        kv: new RedisKeyValueStore({ url: REDIS_URL, prefix: space }),
        loginLimit: { perUser: 100, perAddress: 100 },
        session: { idleTimeoutMs: options.idleTimeoutMs ?? IDLE_MS },
      });
    const both = await Promise.all([make(), make()]);
    services.push(...both);
    return both;
  }

  test('of 20 parallel logins for a one-seat licence, exactly one wins; the seat is free again after logout', async () => {
    const [a, b] = await pair();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => bobLogin(i % 2 ? a : b)));
    const winners = results.filter((result) => result.body.status.internalStatus === '0');
    expect(winners).toHaveLength(1);
    for (const result of results.filter((result) => result.body.status.internalStatus !== '0')) expectRefusal(result, '101', 403, SEATS_TAKEN);
    expectRefusal(await bobLogin(a), '101', 403, SEATS_TAKEN);
    await call(b, 'POST', '/v1/logout', { headers: { sessionId: winners[0]!.body.data.sessionId } });
    sessionIdOf(await bobLogin(a));
    expectRefusal(await bobLogin(b), '101', 403, SEATS_TAKEN);
  });

  test('the seat is free again after release on the other instance', async () => {
    const [a, b] = await pair();
    const first = sessionIdOf(await bobLogin(a));
    expectRefusal(await bobLogin(b), '101', 403, SEATS_TAKEN);
    await call(b, 'POST', '/v1/license/release', { headers: { sessionId: first }, json: { appNames: 'shop' } });
    sessionIdOf(await bobLogin(b));
  });

  test('the seat is free again after the idle timeout', async () => {
    const [a, b] = await pair({ idleTimeoutMs: 1500 });
    sessionIdOf(await bobLogin(a));
    // Redis ends the idle session in real time; wait for it rather than assume how long that takes
    let result = await bobLogin(b);
    for (let tries = 0; result.body.status.internalStatus === '101' && tries < 40; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      result = await bobLogin(b);
    }
    sessionIdOf(result);
  });
});
