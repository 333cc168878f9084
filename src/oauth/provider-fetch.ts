import { ApiError } from '../http/errors.js';
import type { ProviderFetch } from './types.js';

const PROVIDER_TIMEOUT_MS = 10_000;

/** Real `fetch` with a time limit; a network failure becomes `323`. */
export function providerFetch(name: string): ProviderFetch {
  return async (url, init = {}) => {
    try {
      return await fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(PROVIDER_TIMEOUT_MS) });
    } catch (cause) {
      throw new ApiError('323', `${name} could not be reached`, { cause });
    }
  };
}
