import type { BatchItem, BatchResult, OdbRestClient } from 'odbrest/client';

/** What bulk work and imports share: writes many at a time through `/v1/multi`, and values in the form a write takes. */

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value as read, in the form a write takes (PROTOCOL.md 6.3): a reference by its id, a set by its elements' ids, absent as null. */
export function writable(value: unknown): unknown {
  if (value === undefined) return null;
  if (isObject(value) && typeof value['~ObjectID'] === 'string') return { '~ObjectID': value['~ObjectID'] };
  if (isObject(value) && Array.isArray(value['~Elements'])) return { '~Elements': value['~Elements'].map(writable) };
  return value;
}

/** Items of one `/v1/multi` request (PROTOCOL.md 6.5). */
const BATCH = 100;

/** `items` through `/v1/multi`, 100 a request, in order; `onProgress` hears how many have answered. */
export async function batched(client: OdbRestClient, items: BatchItem[], onProgress?: (done: number) => void): Promise<BatchResult[]> {
  const results: BatchResult[] = [];
  for (let at = 0; at < items.length; at += BATCH) {
    results.push(...(await client.multi(items.slice(at, at + BATCH))));
    onProgress?.(results.length);
  }
  return results;
}

/** Whether a batch item was refused. */
export const refusedItem = (result: BatchResult): boolean => result.result.status.internalStatus !== '0';
