import { base64 } from '@scure/base';
import * as v from 'valibot';
import { beginLogin, loginData, newSession, openSession, parseLoginBody, sessionClient, tokenLogin, type LoginBody } from '../auth/login.js';
import { deviceIdOf } from '../auth/acls.js';
import { isHybridLoginBody } from './hybrid.js';
import { SECURE, type SecureLoginSchema } from './contract.js';
import { hybridLogin, loginKeyReply } from './hybrid-login.js';
import type { Session, SessionClient } from '../auth/sessions.js';
import type { LoginContext } from '../auth/context.js';
import { envelope, okReply } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import { parseJsonText } from '../http/json.js';
import { asJsonObject, type ApiRequest } from '../http/request.js';
import { route } from '../http/router.js';
import type { StoredObject } from '../storage/types.js';
import { newSecureState, type SecureSessionState } from './replay.js';
import { startWindow } from './window-updates.js';
import { base64Bytes } from './base64.js';
import { clientKeyDer, importClientPublicKey } from './keys.js';
import { BlockDecryptError, blockDecrypt, blockEncrypt } from './rsa.js';
import { LOGIN_SIGNATURE_HEADER, signLoginAnswer } from './login-signature.js';
import { sealToken } from './token.js';
import { SERVER_KEY } from '../openapi/examples.js';


/**
 * Secure login (PROTOCOL.md 3). Every failure is a plain JSON envelope: `310` for anything about the
 * encryption or the keys, then the codes every login shares (`400`, `302`, `303`, `306`, `101`,
 * `340`-`342`; the `340` session is a plain one, used with the `sessionId` header).
 */

/** A login body is a few hundred bytes; the cap bounds the RSA work an anonymous request can cause. */
const MAX_CREDENTIAL_BLOCKS = 32;


const utf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

/** The login body sealed in `credentials`. The RSA work is queued before this returns its promise. */
async function decryptCredentials(privateKey: CryptoKey, credentials: string): Promise<unknown> {
  let ciphertext: Uint8Array;
  try {
    ciphertext = base64.decode(credentials.replace(/\s+/g, ''));
  } catch {
    throw new ApiError('310', 'credentials must be standard base64 with padding');
  }
  let plaintext: Uint8Array;
  try {
    plaintext = await blockDecrypt(privateKey, ciphertext, MAX_CREDENTIAL_BLOCKS);
  } catch (error) {
    if (error instanceof BlockDecryptError) throw new ApiError('310', `credentials ${error.message}`);
    throw error;
  }
  let body: unknown;
  try {
    body = parseJsonText(utf8.decode(plaintext), 'decrypted credentials');
  } catch {
    throw new ApiError('400', 'decrypted credentials are not a UTF-8 JSON login body');
  }
  return asJsonObject(body, 'decrypted credentials');
}

/**
 * The login body and the client's key. The key's text is checked first (no key work: a malformed key
 * is reported before bad credentials); then nothing but the RSA decryption runs until the credentials
 * open, so garbage (up to 32 blocks) costs one RSA decryption, the first failing block ending it. The
 * key is imported only then (on Node synchronously, ~180 µs).
 */
async function openLogin(privateKey: CryptoKey, credentials: string, publicKeyText: string): Promise<{ login: unknown; clientKey: CryptoKey }> {
  const keyDer = clientKeyDer(publicKeyText.trim());
  const login = await decryptCredentials(privateKey, credentials);
  return { login, clientKey: await importClientPublicKey(keyDer) };
}

async function secureLogin(ctx: LoginContext, request: ApiRequest, input: v.InferOutput<typeof SecureLoginSchema>): Promise<Response> {
  const publicKeyText = input.publicKey ?? input.publickey;
  if (publicKeyText === undefined) throw new ApiError('400', 'publicKey is required');
  // An address over its failed-login limit gets no RSA work; every `310` counts against it.
  const [serverKey] = await Promise.all([ctx.serverKey.get(), ctx.limiter.checkAddress(request.clientAddress)]);
  const { login: decrypted, clientKey } = await openLogin(serverKey.privateKey, input.credentials, publicKeyText).catch(async (error: unknown) => {
    if (error instanceof ApiError && error.code === '310') await ctx.limiter.addressFailed(request.clientAddress);
    throw error;
  });
  // the new session's token is sealed in the crypto thread pool while the login goes on; a token
  // sealed for a login that then fails names no session and is dropped
  const sessionId = ctx.sessions.newId();
  const token = sealToken(serverKey.tokenKey, sessionId);
  token.catch(() => undefined); // awaited below when the login succeeds
  const body = parseLoginBody(decrypted);

  // The login finds its user, and while the password hash is verified, the answer (the user
  // serialized, then RSA-encrypted to the client's key) is prepared side by side; a failed check
  // drops the prepared answer unused and stores nothing.
  const attempt = await beginLogin(ctx, body, request.clientAddress);
  const state = newSecureState(crypto.getRandomValues(new Uint8Array(32)));
  const client = sessionClient(decrypted, request.clientAddress);
  const prepared = attempt.candidate && prepareAnswer(ctx, clientKey, attempt.candidate, body, state, sessionId, token, client);
  const principal = await attempt.finish();
  // a database login verifies only the candidate it named, so the answer was prepared, unless a
  // second factor was used up in the principal's record since (the answer shows the record as stored)
  const { session, sealed } =
    principal === attempt.candidate ? prepared! : prepareAnswer(ctx, clientKey, principal, body, state, sessionId, token, client);
  // the session's replay window is its own record, stored before the answer gives the client its token
  const [, , answer] = await Promise.all([startWindow(ctx.kv, session.id, session.expiresAt, ctx.now()), openSession(ctx, session, principal), sealed]);
  const text = base64Bytes(answer);
  const signature = await signLoginAnswer(serverKey.signingKey, publicKeyText, text);
  return new Response(text, { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8', [LOGIN_SIGNATURE_HEADER]: signature } });
}

/** The session a secure login would start for `candidate`, and its answer sealed to the client's key (not awaited yet). */
function prepareAnswer(
  ctx: LoginContext,
  clientKey: CryptoKey,
  candidate: StoredObject,
  body: LoginBody,
  state: SecureSessionState,
  sessionId: string,
  token: Promise<string>,
  client: SessionClient,
): { session: Session; sealed: Promise<Uint8Array> } {
  const session = newSession(ctx, 'secure', candidate, body, { extra: state, id: sessionId, client });
  const sealed = sealAnswer(ctx, clientKey, candidate, body, session, token, state.key);
  sealed.catch(() => undefined); // awaited once the login succeeds
  return { session, sealed };
}

/** The login answer (PROTOCOL.md 3.3): the envelope with the Secure-Token and K, block-encrypted to the client's key. */
async function sealAnswer(
  ctx: LoginContext,
  clientKey: CryptoKey,
  principal: StoredObject,
  body: LoginBody,
  session: Session,
  token: Promise<string>,
  symmetricKey: string,
): Promise<Uint8Array> {
  const { sessionId: _internal, user, ...rest } = await loginData(ctx, principal, session, deviceIdOf(body));
  const answer = envelope({ sessionId: await token, user, symmetricKey, ...rest });
  return blockEncrypt(clientKey, encoder.encode(JSON.stringify(answer)));
}

/** The secure login, and `/v2/login` in both its forms: hybrid (PROTOCOL.md 3.4) and the JWT login (2.2). */
export function secureLoginRoutes(ctx: LoginContext) {
  return [
    route({
      ...SECURE.postLogin,
      auth: 'none',
      summary: 'Token login (a JWT, used as Authorization: Bearer) or, with aesKey and data, the hybrid login (a plain session)',
      examples: { body: { user: 'dave', pass: 'd7cc2d0fb160b32ae3c69e4271b73574', appNames: [] } },
      answer: 'token, user, databaseName and expiresAt; the hybrid login answers as /v1/login (with publicKey: text/plain, sealed to that key)',
      rawAnswer: { status: 200, contentType: 'text/plain', description: 'the hybrid login with publicKey: the envelope sealed to that key' },
      errors: ['101', '302', '303', '306', '310', '340', '341', '342'],
      // the body parsed as a login when it is one, else as the hybrid form (string aesKey and data, PROTOCOL.md 3.4)
      handler: async (request, { body }) => (isHybridLoginBody(body) ? hybridLogin(ctx, body, request.clientAddress) : tokenLogin(ctx, body, request.clientAddress)),
    }),
    route({
      ...SECURE.getLoginKey,
      auth: 'none',
      appKey: false, // a public key is public: the TypeScript sample fetches it with no headers (PROTOCOL.md 1.2)
      summary: 'The server public key of the hybrid login',
      examples: { answer: { key: SERVER_KEY } },
      answer: 'key: the RSA public key as an SPKI PEM',
      handler: () => loginKeyReply(ctx),
    }),
    route({
      ...SECURE.getLoginSecureKey,
      auth: 'none',
      appKey: false,
      summary: 'The server public key of the secure login',
      examples: { answer: { key: SERVER_KEY } },
      answer: 'key: the RSA public key as an SPKI PEM (CR LF line breaks)',
      handler: async () => okReply({ key: (await ctx.serverKey.get()).publicKeyPem }),
    }),
    route({
      ...SECURE.postLoginSecure,
      auth: 'none',
      summary: 'Secure login: credentials RSA-encrypted to the server key; opens the secure transport',
      rawAnswer: {
        status: 200,
        contentType: 'text/plain',
        description: 'base64 of the envelope (sessionId: the Secure-Token, user, symmetricKey, databaseName), RSA-OAEP-SHA-1 encrypted to publicKey in blocks',
      },
      errors: ['101', '302', '303', '306', '310', '340', '341', '342'],
      handler: (request, { body }) => secureLogin(ctx, request, body),
    }),
  ];
}
