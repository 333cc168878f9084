import { parseLoginBody, sessionLogin } from '../auth/login.js';
import type { LoginContext } from '../auth/context.js';
import { envelope, okReply, type JsonReply } from '../http/envelope.js';
import type { LoginData } from '../openapi/schemas.js';
import { LOGIN_SIGNATURE_HEADER, signLoginAnswer } from './login-signature.js';
import { hybridRefusal, openHybridLogin, sealHybridAnswer, type HybridLoginBody } from './hybrid.js';

/** `GET /v2/login/key`: the server public key as the unindented SPKI PEM of 3.1. */
export async function loginKeyReply(ctx: LoginContext): Promise<JsonReply<{ key: string }>> {
  return okReply({ key: (await ctx.serverKey.get()).publicKeyPem });
}

/**
 * `POST /v2/login` with a hybrid body (PROTOCOL.md 3.4). An address over its failed-login limit is
 * `303` before any decryption. A body that cannot be opened is the one `310`, counted against the
 * address; then the plain login of the decrypted JSON, whose failures are its own plain envelopes.
 * Success is the `/v1/login` envelope: sealed as `A|B` text when the client sent a key, plain JSON
 * otherwise.
 */
export async function hybridLogin(ctx: LoginContext, body: HybridLoginBody, clientAddress: string | undefined): Promise<JsonReply<LoginData> | Response> {
  const [{ hybridKey, signingKey }] = await Promise.all([ctx.serverKey.get(), ctx.limiter.checkAddress(clientAddress)]);
  let opened: Awaited<ReturnType<typeof openHybridLogin>>;
  try {
    opened = await openHybridLogin(hybridKey, body);
  } catch {
    await ctx.limiter.addressFailed(clientAddress);
    throw hybridRefusal();
  }
  const data = await sessionLogin(ctx, parseLoginBody(opened.login), clientAddress);
  if (!opened.clientKey || opened.publicKey === undefined) return okReply(data);
  const sealed = new TextEncoder().encode(await sealHybridAnswer(opened.clientKey, JSON.stringify(envelope(data))));
  // bound to the server key (PROTOCOL.md 3.3), so a pinned client can tell it from an attacker's answer
  const signature = await signLoginAnswer(signingKey, opened.publicKey, sealed);
  return new Response(sealed, { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8', [LOGIN_SIGNATURE_HEADER]: signature } });
}
