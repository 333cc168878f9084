/**
 * Input declared once (issue 42): a macro's declared parameters and a route's schemas are checked
 * before anything runs, `400` naming the member, through the one translator of validation errors.
 */
import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { defineMacro, defineRoute } from '../../src/index.js';
import { call, demoService, expectError, login } from '../helpers.js';

describe('declared input', () => {
  test('a macro with declared parameters: a wrong type is 400 naming the member, before the macro runs', async () => {
    const seen: unknown[] = [];
    const service = await demoService({
      macros: {
        weather: defineMacro({
          params: v.object({ city: v.string(), days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, 'days must be at least 1'))) }),
          run: (_context, { city, days = 1 }) => {
            seen.push(city);
            return { city: city.toUpperCase(), days };
          },
        }),
      },
    });
    const sessionId = await login(service);
    const headers = { sessionId };
    const wrong = await call(service, 'POST', '/v1/execute/weather', { headers, json: { city: 42 } });
    expectError(wrong, '400', 400);
    expect(wrong.body.status.statusMessage).toBe('city must be string');
    const missing = await call(service, 'POST', '/v1/execute/weather', { headers });
    expect(missing.body.status.statusMessage).toBe('city is required');
    const range = await call(service, 'POST', '/v1/execute/weather', { headers, json: { city: 'Kiel', days: 0 } });
    expect(range.body.status.statusMessage).toBe('days must be at least 1');
    expect(seen).toEqual([]);
    const ok = await call(service, 'POST', '/v1/execute/weather', { headers, json: { city: 'Kiel' } });
    expect(ok.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { city: 'KIEL', days: 1 } });
    // in a batch item too
    const batch = await call(service, 'POST', '/v1/multi', { headers, json: [{ method: 'POST', path: '/v1/execute/weather', data: { city: false } }] });
    expect(batch.body.data[0]).toEqual({ httpStatus: 400, result: { status: { internalStatus: '400', statusMessage: 'city must be string' }, data: {} } });
  });

  test("a host route's path parameters, query and body are checked before its handler", async () => {
    let calls = 0;
    const service = await demoService({
      routes: [
        defineRoute({
          method: 'POST',
          path: 'v1/notes/:folder',
          query: v.object({ limit: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'limit must be a whole number'))) }),
          body: v.object({ text: v.pipe(v.string('text must be a string'), v.maxLength(10, 'text must be at most 10 characters')) }),
          handler: (_context, params, body, query) => {
            calls++;
            return { folder: params.folder, text: body.text, limit: query.limit ?? null };
          },
        }),
      ],
    });
    const headers = { sessionId: await login(service) };
    expect((await call(service, 'POST', '/v1/notes/inbox?limit=x', { headers, json: { text: 'hi' } })).body.status.statusMessage).toBe('limit must be a whole number');
    expect((await call(service, 'POST', '/v1/notes/inbox', { headers, json: { text: 'a long text' } })).body.status.statusMessage).toBe('text must be at most 10 characters');
    expect((await call(service, 'POST', '/v1/notes/inbox', { headers, json: [] })).body.status.statusMessage).toBe('request body must be a JSON object');
    expect(calls).toBe(0);
    expect((await call(service, 'POST', '/v1/notes/inbox?limit=3', { headers, json: { text: 'hi' } })).body.data).toEqual({ folder: 'inbox', text: 'hi', limit: '3' });
  });
});
