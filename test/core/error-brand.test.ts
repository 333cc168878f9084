/**
 * Errors made by another copy of odbrest (here the built CommonJS package next to these sources) are
 * recognised by their brand, not their class identity: a macro's ApiError answers its own code, a
 * store's StorageUnavailableError 503.
 */
import { createRequire } from 'node:module';
import { expect, test } from 'vitest';
import { ApiError, StorageUnavailableError } from '../../src/index.js';
import { call, login, demoService } from '../helpers.js';

const other = createRequire(import.meta.url)('odbrest') as typeof import('../../src/index.js');

test('the other copy is a different class', () => {
  expect(other.ApiError).not.toBe(ApiError);
});

test('an ApiError of another copy, thrown by a macro, answers its code and status', async () => {
  const service = await demoService({
    macros: {
      refuse: () => {
        throw new other.ApiError('4711', 'not on Sundays', { status: 409, data: { day: 'Sunday' } });
      },
    },
  });
  const sessionId = await login(service);
  const result = await call(service, 'POST', '/v1/execute/refuse', { headers: { sessionId } });
  expect([result.status, result.body]).toEqual([409, { status: { internalStatus: '4711', statusMessage: 'not on Sundays' }, data: { day: 'Sunday' } }]);
});

test('instanceof holds across copies, and subclasses keep their own check', () => {
  class Refusal extends ApiError {}
  expect(new other.ApiError('400', 'x')).toBeInstanceOf(ApiError);
  expect(new ApiError('400', 'x')).toBeInstanceOf(other.ApiError);
  expect(new Refusal('400', 'x')).toBeInstanceOf(ApiError);
  expect(new ApiError('400', 'x')).not.toBeInstanceOf(Refusal);
  expect(new Error('x')).not.toBeInstanceOf(ApiError);
  expect(new other.StorageUnavailableError()).toBeInstanceOf(StorageUnavailableError);
  expect(new other.StoreConflictError()).not.toBeInstanceOf(StorageUnavailableError);
});

test.each([
  ['StorageUnavailableError', 503, { status: { internalStatus: '503', statusMessage: 'storage unavailable, retry later' }, data: {} }],
  ['StoreConflictError', 409, { status: { internalStatus: '409', statusMessage: 'changed meanwhile' }, data: {} }],
  ['StoreValueError', 400, { status: { internalStatus: '400', statusMessage: 'changed meanwhile' }, data: {} }],
] as const)('a %s of another copy, from the store a macro uses, answers %i', async (name, status, body) => {
  const service = await demoService({
    macros: {
      write: () => {
        throw new other[name]('changed meanwhile');
      },
    },
  });
  const result = await call(service, 'POST', '/v1/execute/write', { headers: { sessionId: await login(service) } });
  expect([result.status, result.body]).toEqual([status, body]);
});
