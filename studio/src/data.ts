import { OdbRestError, OdbRestUnauthenticatedRefusal, type OdbRestClient, type SerializedSet } from 'odbrest/client';
import { t } from './i18n/index.js';
import { sessionEnded } from './session.js';

/** A class the session may read, with its count (PROTOCOL.md 6.11 `GET /v1/classes`). */
export interface ClassEntry {
  Name: string;
  Declared: boolean;
  Count?: number;
  CountEstimated?: boolean;
}

type WithClasses = OdbRestClient & { classes?: () => Promise<SerializedSet<ClassEntry>> };

/** The classes to browse: `GET /v1/classes` where the client has it, else the declared classes, each counted by a one-object page. */
export async function loadClasses(client: OdbRestClient): Promise<ClassEntry[]> {
  const typed = client as WithClasses;
  if (typeof typed.classes === 'function') return (await typed.classes())['~Elements'];
  const model = await client.modelStructure();
  return Promise.all(
    model['~Elements'].map(async ({ Name, Declared }) => {
      const page = await client.listObjects(Name, { perPage: 1, serialization: { type: 'oid' } }).catch(() => undefined);
      return { Name, Declared, Count: page?.['~UnfilteredCount'] };
    }),
  );
}

/** The declared fields of a class, in declaration order; empty for an undeclared class. */
export async function declaredFields(client: OdbRestClient, className: string): Promise<Array<{ name: string; type: string; refClass?: string }>> {
  const model = await client.modelStructure([className]).catch(() => undefined);
  const found = model?.['~Elements'].find((entry) => entry.Name === className);
  if (!found?.Declared) return [];
  return found.Members.filter((member) => !member.Name.startsWith('~')).map((member) => ({ name: member.Name, type: member.Type, refClass: member.Class }));
}

/** The message of a failed call: the service's own words. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * What to show for a failed call. A session that ended (`201`, `204`: expired, logged out elsewhere)
 * goes back to the login, which says so; otherwise the service's own words.
 */
export function failureText(error: unknown): string {
  const code = error instanceof OdbRestError || error instanceof OdbRestUnauthenticatedRefusal ? error.internalStatus : undefined;
  if (code === '201' || code === '204') {
    sessionEnded();
    return t('sessionEnded');
  }
  return messageOf(error);
}
