import type { Session } from '../auth/sessions.js';
import type { StoredObject } from '../storage/types.js';

/** What a session does with a file: download it, upload a new one, replace its bytes, delete it. */
export type FileAction = 'read' | 'create' | 'update' | 'delete';

/**
 * Whether `session` may do `action` on the file class (and on `file`, when there is one).
 *
 * The one place the file routes ask. Until the access rules of PROTOCOL.md 6.4 (issue 13) reach the
 * service context, it answers as the demo's `Document` rules do: any session with an application
 * (the file routes let no other in) may read and upload, nobody deletes. Those rules replace this
 * function: read to download, create to upload, update for `replaceOID`.
 */
export function mayUseFile(session: Session | undefined, action: FileAction, _file?: StoredObject): boolean {
  return session !== undefined && session.appNames.length > 0 && action !== 'delete';
}
