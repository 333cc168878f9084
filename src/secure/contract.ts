/**
 * The `/v2/login` routes' contracts (PROTOCOL.md 2.2, 3): method, path and schemas, without handlers
 * (http/route-spec.ts); secure/routes.ts attaches the handlers.
 */
import * as v from 'valibot';
import { LoginBodySchema } from '../auth/login-contract.js';
import { spec } from '../http/route-spec.js';
import { LoginAnswer, TokenLoginAnswer } from '../openapi/schemas.js';

/** The hybrid login body as documented; a malformed `publicKey` is `310`, not `400`, so it is checked when imported. */
export const HybridLoginBodySchema = v.object({
  aesKey: v.pipe(v.string(), v.description('base64 of RSA-OAEP-SHA-256 under the server key of the 32-byte AES key K')),
  data: v.pipe(v.string(), v.description('base64 of a 16-byte IV and AES-256-CBC under K of the login JSON')),
  publicKey: v.optional(v.pipe(v.string(), v.description("the client's RSA public key: asks for an encrypted answer"))),
  publickey: v.optional(v.string()),
});

export const PublicKey = v.object({ key: v.pipe(v.string(), v.startsWith('-----BEGIN PUBLIC KEY-----'), v.description('the RSA public key as an SPKI PEM')) });

export const SecureLoginSchema = v.object({
  credentials: v.string('credentials must be a string'),
  publicKey: v.optional(v.string('publicKey must be a string')),
  publickey: v.optional(v.string('publickey must be a string')),
});

export const SECURE = {
  postLogin: spec({ method: 'POST', path: '/v2/login', body: v.union([LoginBodySchema, HybridLoginBodySchema]), answerSchema: v.union([TokenLoginAnswer, LoginAnswer]) }),
  getLoginKey: spec({ method: 'GET', path: '/v2/login/key', answerSchema: PublicKey }),
  getLoginSecureKey: spec({ method: 'GET', path: '/v2/login/secure/key', answerSchema: PublicKey }),
  postLoginSecure: spec({ method: 'POST', path: '/v2/login/secure', body: SecureLoginSchema }),
};
