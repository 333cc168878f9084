/** How the errors a store throws reach the client: one envelope each, with its code and status. */
import { expect, it } from 'vitest';
import { errorEnvelope, toApiError } from '../../src/http/envelope.js';
import { BlobTooLargeError } from '../../src/index.js';

it('a blob over its size limit is answered 413 with the limit in the message', () => {
  const error = toApiError(new BlobTooLargeError(100 * 1024 * 1024));
  expect(error.status).toBe(413);
  expect(errorEnvelope(error)).toEqual({ status: { internalStatus: '413', statusMessage: 'the file is larger than 104857600 bytes' }, data: {} });
});
