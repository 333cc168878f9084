/** The README's "Realtime" curl walkthrough, run as printed against the demo service on a real server. */
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createDemoService } from '../../examples/demo-service.mjs';
import { serve } from '../../adapters/node.js';
import type { Service } from '../../src/index.js';
import { onlyBlock, root } from '../support/readme.js';

const run = promisify(execFile);
let server: ReturnType<typeof serve> extends Promise<infer S> ? S : never;
let port = 0;

beforeAll(async () => {
  const service = createDemoService({ ODBREST_PASSWORD_ITERATIONS: '1000' }, { basePath: '' }) as unknown as Service;
  await service.ready;
  server = await serve(service, { port: 0, hostname: '127.0.0.1' });
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())));

test('the curl -N walkthrough prints the create event it describes', async () => {
  const block = onlyBlock('realtime');
  const code = block.code.replaceAll('http://localhost:8080', `http://127.0.0.1:${port}`);
  const { stdout } = await run('bash', ['-c', code], { cwd: root, timeout: 30_000 });
  const printed = block.code.split('\n').filter((line) => line.startsWith('# ')).map((line) => line.slice(2));
  expect(printed[0]).toBe(': odbrest events');
  const frames = stdout.split('\n\n').filter((frame) => frame.includes('event: create'));
  expect(frames).toHaveLength(1);
  const [id, event, data] = frames[0]!.trim().split('\n');
  expect(stdout.startsWith(': odbrest events\n\n')).toBe(true);
  expect(id).toMatch(/^id: [A-Za-z0-9]+-\d+$/);
  expect(event).toBe(printed[2]);
  expect(printed[3]).toMatch(/^data: /);
  const json = JSON.parse(data!.slice('data: '.length));
  expect(json).toMatchObject({ className: 'Customer', object: { '~ClassName': 'Customer', Name: 'Live GmbH', City: 'Kiel' } });
  expect(json['~ObjectID']).toBe(json.object['~ObjectID']);
}, 60_000);
