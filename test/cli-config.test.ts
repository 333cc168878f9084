/** Host configuration for the standalone server: api-config.yml, then ODBREST_* variables. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../src/cli/config.js';
import { createService } from '../src/index.js';
import { call, loginBody, USERS } from './helpers.js';

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'odbrest-config-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('loadConfig', () => {
  test('reads api-config.yml and the data file next to it', async () => {
    const dir = dirWith({
      'api-config.yml': 'port: 9090\ndataFile: ./data.json\ndatabaseName: crm\nappKeys: [web]\nidleTimeoutMinutes: 5\nloginLimit: { perUser: 2 }\n',
      'data.json': JSON.stringify({ objects: [{ '~ClassName': 'User', Name: 'bob', _password: USERS.bob, _licences: ['crm'] }] }),
    });
    const config = loadConfig({}, dir);
    expect(config.port).toBe(9090);
    expect(config.options).toMatchObject({ databaseName: 'crm', appKeys: ['web'], idleTimeoutMs: 300_000, loginLimit: { perUser: 2 } });
    const service = createService({ ...config.options, passwordIterations: 1000 });
    await service.ready;
    const result = await call(service, 'POST', '/v1/login', { json: loginBody('bob', USERS.bob), headers: { appkey: 'web' } });
    expect(result.body.data.databaseName).toBe('crm');
  });

  test('environment variables win over the file', () => {
    const dir = dirWith({ 'api-config.yml': 'port: 9090\ndatabaseName: fromfile\n' });
    const config = loadConfig({ PORT: '7000', ODBREST_DATABASE_NAME: 'fromenv', ODBREST_APP_KEYS: 'a, b', ODBREST_TRUST_PROXY: 'true' }, dir);
    expect(config.port).toBe(7000);
    expect(config.options).toMatchObject({ databaseName: 'fromenv', appKeys: ['a', 'b'], trustProxy: true });
  });

  test('no file and no variables: defaults', () => {
    const config = loadConfig({}, dirWith({}));
    expect(config.port).toBe(8080);
    expect(config.options.data).toBeUndefined();
  });

  test.each([
    ['port: eighty\n', 'invalid configuration (port): port must be a number'],
    ['jwtSecret: short\n', 'invalid configuration (jwtSecret): jwtSecret must be at least 32 characters'],
    ['appKeys: web\n', 'invalid configuration (appKeys): appKeys must be a list of strings'],
    ['prot: 80\n', 'invalid configuration (prot)'],
    ['- a\n- b\n', 'expected a mapping of options'],
    ['dataFile: ./missing.json\n', 'cannot read data file'],
  ])('%j stops with a message naming the problem', (yaml, message) => {
    expect(() => loadConfig({}, dirWith({ 'api-config.yml': yaml }))).toThrow(message);
  });

  test.each([
    [{ ODBREST_TRUST_PROXY: 'yes' }, 'invalid configuration (trustProxy): trustProxy must be true or false'],
    [{ ODBREST_PORT: 'abc' }, 'invalid configuration (port): port must be a number'],
    [{ ODBREST_IDLE_MINUTES: 'soon' }, 'invalid configuration (idleTimeoutMinutes): idleTimeoutMinutes must be a number'],
  ])('the variables %j stop with a message naming the option', (env, message) => {
    expect(() => loadConfig(env, dirWith({}))).toThrow(message);
  });

  test.each([
    ['1', true],
    ['false', false],
    ['0', false],
  ])('ODBREST_TRUST_PROXY=%s overrides the file', (value, expected) => {
    const dir = dirWith({ 'api-config.yml': `trustProxy: ${!expected}\n` });
    expect(loadConfig({ ODBREST_TRUST_PROXY: value }, dir).options.trustProxy).toBe(expected);
  });

  test('PORT wins over ODBREST_PORT', () => {
    expect(loadConfig({ ODBREST_PORT: '7001', PORT: '7002' }, dirWith({})).port).toBe(7002);
  });

  test('a named config file that does not exist is an error', () => {
    expect(() => loadConfig({ ODBREST_CONFIG: 'nope.yml' }, dirWith({}))).toThrow('config file not found');
  });
});
