import { clientPassValue, hashPassword } from '../auth/passwords.js';
import type { Fields, ObjectStore } from './types.js';

/**
 * Seed data, as in `examples/demo-data.json`: objects with `~ClassName`, an optional `~ObjectID`, and
 * their fields. References are `{"$ref": id}`, sets `{"$set": [ids]}`. A `_password` field holds a
 * plaintext password: it is stored only as `_passwordHash`, the slow hash of the value a client sends
 * for it (the hex MD5 of the password, PROTOCOL.md 2.1).
 */
export interface SeedData {
  objects: SeedObject[];
}
export type SeedObject = { '~ClassName': string; '~ObjectID'?: string } & Record<string, unknown>;

export async function importObjects(store: ObjectStore, data: SeedData, passwordIterations?: number): Promise<number> {
  if (!data || !Array.isArray(data.objects)) throw new Error('seed data must be an object with an "objects" array');
  let count = 0;
  for (const item of data.objects) {
    const { '~ClassName': className, '~ObjectID': id, '~StoreTime': _ignored, _password, ...rest } = item;
    if (typeof className !== 'string' || className === '') throw new Error(`seed object ${count} has no ~ClassName`);
    const fields = rest as Fields;
    if (typeof _password === 'string') fields._passwordHash = await hashPassword(clientPassValue(_password), passwordIterations);
    await store.put({ id, className, fields });
    count++;
  }
  return count;
}
