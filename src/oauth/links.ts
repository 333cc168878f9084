import type { Fields, ObjectStore, StoredObject } from '../storage/types.js';
import type { Identity } from './types.js';

/** Class of the link objects: one per external identity, referring to the database user it logs in as. */
export const IDENTITY_CLASS = 'ExternalIdentity';

/** The link object's fields: `provider` (configured name, lower case), `subject`, `user` (a reference). */
export function linkFields(provider: string, type: string, identity: Identity, userId: string): Fields {
  return {
    provider,
    type,
    subject: identity.subject,
    user: { $ref: userId },
    name: identity.name ?? null,
    surname: identity.surname ?? null,
    email: identity.email ?? null,
  };
}

export async function findLink(store: ObjectStore, provider: string, subject: string): Promise<StoredObject | undefined> {
  const { objects } = await store.find({ className: IDENTITY_CLASS, where: { provider, subject }, limit: 1 });
  return objects[0];
}

/**
 * Links the identity to a user: the existing link object is pointed at the user (a second `dfUuid`
 * for the same identity may have been used meanwhile), otherwise a new one is stored. Never matches
 * on e-mail: only provider and subject identify.
 */
export async function saveLink(store: ObjectStore, fields: Fields): Promise<StoredObject> {
  const existing = await findLink(store, fields.provider as string, fields.subject as string);
  return store.put({ id: existing?.id, className: IDENTITY_CLASS, fields });
}
