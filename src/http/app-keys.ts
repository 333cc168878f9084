import { ApiError } from './errors.js';

/** The `appkey` check of PROTOCOL.md 1.2: any non-empty value, or one of `accepted` when given. */
export function appKeyCheck(accepted: readonly string[] | undefined): (headers: Headers) => void {
  const keys = accepted && new Set(accepted);
  return (headers) => {
    const appKey = headers.get('appkey');
    if (!appKey) throw new ApiError('100', 'appkey header missing');
    if (keys && !keys.has(appKey)) throw new ApiError('100', 'appkey not accepted');
  };
}
