import { envelope, okReply, type Answer, type JsonReply } from '../http/envelope.js';
import { hybridRefusal, openHybridLogin, sealHybridAnswer, type HybridLoginBody } from './hybrid.js';
import type { ServerKey } from './server-key.js';

/**
 * The two routes of the hybrid `/v2/login` (PROTOCOL.md 3.4), written against what they need and
 * nothing more, so the service wires them in without either knowing the other.
 */

/** Where the server key comes from (`ServerKeySource` is one). */
export interface ServerKeys {
  get(): Promise<ServerKey>;
}

export interface HybridLoginDeps {
  serverKey: ServerKeys;
  /** The plain login of the decrypted login JSON (any shape: it answers `400` itself); its `/v1/login` data. */
  login(body: unknown, clientAddress: string | undefined): Promise<{ data: Record<string, unknown> }>;
  /**
   * Throws `303` while the client address is over its failed-login limit (PROTOCOL.md 2.4). Called
   * before any RSA work, so an address cannot query the decryption more often than the limit allows.
   */
  checkAddress(clientAddress: string | undefined): Promise<void>;
  /** Counts a `310` against the client address in the failed-login limit. */
  countFailure(clientAddress: string | undefined): Promise<void>;
}

/** `GET /v2/login/key`: the server public key as the unindented SPKI PEM of 3.1. */
export async function loginKeyReply(serverKey: ServerKeys): Promise<JsonReply> {
  return okReply({ key: (await serverKey.get()).publicKeyPem });
}

/**
 * `POST /v2/login` with a hybrid body (`isHybridLoginBody`). An address over its failed-login limit
 * is `303` before any decryption. A body that cannot be opened is the one `310`, counted against the
 * address; a login that then fails throws the login's own error, answered as a plain envelope.
 * Success is the `/v1/login` envelope: sealed as `A|B` text when the client sent a key, plain JSON
 * otherwise.
 */
export async function hybridLogin(deps: HybridLoginDeps, body: HybridLoginBody, clientAddress: string | undefined): Promise<Answer> {
  const [{ hybridKey }] = await Promise.all([deps.serverKey.get(), deps.checkAddress(clientAddress)]);
  let opened: Awaited<ReturnType<typeof openHybridLogin>>;
  try {
    opened = await openHybridLogin(hybridKey, body);
  } catch {
    await deps.countFailure(clientAddress);
    throw hybridRefusal();
  }
  const { data } = await deps.login(opened.login, clientAddress);
  if (!opened.clientKey) return okReply(data);
  const sealed = await sealHybridAnswer(opened.clientKey, JSON.stringify(envelope(data)));
  return new Response(sealed, { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}
