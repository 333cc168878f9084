import { OdbRestError, OdbRestUnauthenticatedRefusal, type ClassSummary, type OdbRestClient } from 'odbrest/client';
import { t } from './i18n/index.js';
import { sessionEnded } from './session.js';

/** The classes the session may read, with their counts (PROTOCOL.md 6.11 `GET /v1/classes`), by name. */
export async function loadClasses(client: OdbRestClient): Promise<ClassSummary[]> {
  return (await client.classes())['~Elements'];
}

export interface DeclaredField {
  name: string;
  type: string;
  refClass?: string;
}

/** The declared fields of a class, in declaration order; empty for an undeclared class. */
export async function declaredFields(client: OdbRestClient, className: string): Promise<DeclaredField[]> {
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

/** A query text the service refused (`400`, PROTOCOL.md 6.2): its message and the position it names, to mark in `text`. */
export interface QueryFailure {
  message: string;
  at?: number;
  text: string;
}

/** `cause` as a refused query text, when it is one (a `400` for a non-empty text); else undefined. */
export function queryFailure(cause: unknown, text: string): QueryFailure | undefined {
  if (!(cause instanceof OdbRestError) || cause.internalStatus !== '400' || !text.trim()) return undefined;
  const position = /query text: .* at (\d+)$/.exec(cause.message);
  return { message: cause.message, at: position ? Number(position[1]) : undefined, text };
}
