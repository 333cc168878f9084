import { ApiError } from '../http/errors.js';

/** `205`: a secure request the transport refuses (answered unencrypted). */
export const rejected = (why: string) => new ApiError('205', `secure request rejected: ${why}`);

/** `201`: the Secure-Token names no live secure session. */
export const gone = () => new ApiError('201', 'secure session invalid, expired or logged out');
