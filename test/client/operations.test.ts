/**
 * `src/client/operations.ts` is the route table's operations (id, method, OpenAPI path, tag) as the
 * typed client and the studio use them: generated from the table, and this test fails when the two
 * differ. `UPDATE_OPERATIONS=1 npx vitest run test/client/operations.test.ts` writes it anew.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from 'vitest';
import { Core } from '../../src/core.js';
import { operationsOf } from '../../src/openapi/document.js';

const file = resolve(new URL('../..', import.meta.url).pathname, 'src/client/operations.ts');

function generated(): string {
  const operations = operationsOf(new Core({}).routes);
  const lines = Object.entries(operations).map(([id, { method, path, tag }]) => `  ${id}: { method: '${method}', path: '${path}', tag: '${tag}' },`);
  return `/**
 * Every operation of the service's route table: its method, its path as the OpenAPI document writes it
 * and its tag, by operation id (Swagger UI links \`#/{tag}/{operationId}\`). Generated from the table;
 * test/client/operations.test.ts fails when they differ (\`UPDATE_OPERATIONS=1\` writes it anew).
 */
export const OPERATIONS = {
${lines.join('\n')}
} as const;

export type OperationId = keyof typeof OPERATIONS;
`;
}

test('src/client/operations.ts is the route table (generated)', () => {
  const expected = generated();
  if (process.env.UPDATE_OPERATIONS) writeFileSync(file, expected);
  expect(readFileSync(file, 'utf8')).toBe(expected);
});
