/**
 * The parts of the service's wiring that concern objects and writes, from the options: the classes the
 * object endpoints never serve, the write hooks and what writes do beyond storing (PROTOCOL.md 6.3).
 */
import type { ServiceContext } from '../context.js';
import { IDENTITY_CLASS } from '../oauth/links.js';
import { PROVIDER_CLASS } from '../oauth/providers.js';
import type { ServiceOptions } from '../options.js';
import { RECYCLED_CLASS } from './recycle.js';
import { writeOptions } from './writes.js';

/** The service's own internal classes (OAuth providers and links, recycle bin entries) and the host's. */
export function serviceInternalClasses(options: ServiceOptions): Set<string> {
  return new Set([PROVIDER_CLASS, IDENTITY_CLASS, RECYCLED_CLASS, ...(options.objects?.internalClasses ?? [])]);
}

/** `writeHooks` and `writeOptions` of the service context. */
export function writeContext(options: ServiceOptions): Pick<ServiceContext, 'writeHooks' | 'writeOptions'> {
  return {
    writeHooks: { beforeWrite: options.objects?.beforeWrite, afterWrite: options.objects?.afterWrite },
    writeOptions: writeOptions(options.objects, options.actions),
  };
}
