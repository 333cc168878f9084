import type { AuthContext } from '../../auth/context.js';
import type { ChangeEvents } from '../../events/types.js';
import type { FileSettings } from '../../files/settings.js';
import type { ModelContext } from '../model/index.js';
import type { ReadContext } from '../read/index.js';
import type { WriteHooks, WriteOptions } from './writes.js';

/** What writing objects adds to the service context (PROTOCOL.md 6.3, 6.6, 6.7): it reads, checks the model, and tells the events. */
export interface WriteContext extends ReadContext, ModelContext, Pick<AuthContext, 'principals'> {
  /** The host's `beforeWrite` and `afterWrite` (PROTOCOL.md 6.3). */
  readonly writeHooks: WriteHooks;
  /** Deletes to the recycle bin or for good, the bin's days, and the host's actions (PROTOCOL.md 6.3). */
  readonly writeOptions: WriteOptions;
  /** Realtime change events (PROTOCOL.md 8): the write path publishes every write here. */
  readonly events: ChangeEvents;
  /** The blob store, upload limit and file class of the file routes (PROTOCOL.md 6.6). */
  readonly files: FileSettings;
}
