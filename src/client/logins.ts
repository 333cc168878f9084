/**
 * The sealed logins (PROTOCOL.md 3 and 4): the hybrid login, whose credentials are sealed to the
 * server key, and the secure login, after which every request goes through the encrypted, signed
 * channel. Both check a pinned server key (`serverKey`) before a credential is sent, and the answer's
 * `Login-Signature` under it.
 */
import { base64 } from '@scure/base';
import type { BodyOf } from '../contract.js';
import { clientPassValue } from '../auth/passwords.js';
import { verifyLoginSignature } from '../secure/login-signature.js';
import { generateRsaKeyPair, OAEP, pemBody, toPem } from '../secure/keys.js';
import { blockDecrypt, blockEncrypt } from '../secure/rsa.js';
import { OdbRestProtocolError } from './errors.js';
import { hybridKeyPair, hybridLoginBody, openHybridAnswer } from './hybrid-login.js';
import { SecureChannel } from './secure-channel.js';
import { isPinnedKey, pinnedKeyHashes } from './server-key-pin.js';
import { unwrap, type Transport } from './transport.js';
import type { LoginCredentials, SecureLogin, SessionLogin } from './types.js';

export interface SecureLoginOptions {
  /** The client's RSA-OAEP (SHA-1) key pair; default a new 2048-bit pair per login. */
  keyPair?: CryptoKeyPair;
}

export interface HybridLoginOptions {
  /** The client's RSA-OAEP (SHA-256) key pair for the sealed answer; default a new 2048-bit pair per login. */
  keyPair?: CryptoKeyPair;
  /** Send no public key: the answer comes as plain JSON. Default false (sealed, as the real clients ask). */
  plainAnswer?: boolean;
}

/** The body every login sends (`POST /v1/login`'s): `pass` the MD5 form of the password, as the real client sends it. */
export function loginBody(credentials: LoginCredentials): BodyOf<'POST', '/v1/login'> {
  const pass = credentials.pass ?? (credentials.password === undefined ? undefined : clientPassValue(credentials.password));
  if (pass === undefined) throw new TypeError('login needs password or pass');
  const body = { user: credentials.user, pass, appNames: credentials.appNames };
  return credentials.twoFactorToken === undefined ? body : { ...body, '2faToken': credentials.twoFactorToken };
}

/** The sealed logins of one client: its transport and the keys it pins. */
export function sealedLogins(transport: Transport) {
  const { serverKey: pin, symmetricCrypto } = transport.options;
  const pinned = pin === undefined ? undefined : pinnedKeyHashes(pin);

  /** The server key a login fetched, as SPKI DER, after the pin check (refused before any credential is sent). */
  async function keyOf(path: '/v2/login/secure/key' | '/v2/login/key', kind: string): Promise<Uint8Array> {
    const { key } = await transport.call('GET', path, {}, false);
    const serverDer = pemBody(key, ['PUBLIC KEY']);
    if (!serverDer) throw new OdbRestProtocolError('the server key is not an SPKI PEM', 200);
    if (pinned && !isPinnedKey(serverDer.der, pinned)) {
      throw new OdbRestProtocolError(`${kind} login refused: the server key is not the pinned serverKey; the credentials were not sent`, 200);
    }
    return serverDer.der;
  }

  /**
   * A pinned client believes a login answer only when its `Login-Signature` verifies under the pinned
   * key (PROTOCOL.md 3.3): otherwise someone who relayed the real key could answer with its own.
   */
  async function checkSignature(serverDer: Uint8Array, publicKey: string, response: Response, body: Uint8Array, kind: string): Promise<void> {
    if (!pinned) return;
    if (!(await verifyLoginSignature(serverDer, publicKey, body, response.headers.get('login-signature')))) {
      throw new OdbRestProtocolError(`${kind} login refused: the answer's Login-Signature is missing or does not verify under the pinned serverKey`, response.status);
    }
  }

  /** A sealed login sent: the response, its bytes and their text. */
  async function post(path: string, body: string): Promise<{ response: Response; bytes: Uint8Array; text: string }> {
    const response = await transport.fetch(`${transport.root}${path}`, { method: 'POST', headers: { appkey: transport.options.appKey, 'content-type': 'application/json' }, body });
    const bytes = new Uint8Array(await response.arrayBuffer());
    return { response, bytes, text: new TextDecoder().decode(bytes) };
  }

  async function secure(credentials: LoginCredentials, secureOptions: SecureLoginOptions = {}): Promise<SecureLogin> {
    const serverDer = await keyOf('/v2/login/secure/key', 'secure');
    const serverKey = await crypto.subtle.importKey('spki', serverDer as Uint8Array<ArrayBuffer>, OAEP, false, ['encrypt']);
    const keyPair = secureOptions.keyPair ?? (await generateRsaKeyPair(2048));
    const publicKey = toPem('PUBLIC KEY', new Uint8Array(await crypto.subtle.exportKey('spki', keyPair.publicKey)));
    const sealed = await blockEncrypt(serverKey, new TextEncoder().encode(JSON.stringify(loginBody(credentials))));
    const { response, bytes, text } = await post('/v2/login/secure', JSON.stringify({ credentials: base64.encode(sealed), publicKey }));
    // Failures come back as plain JSON envelopes; success is base64 of the envelope sealed to our key.
    if (!response.ok || /json/i.test(response.headers.get('content-type') ?? '')) {
      unwrap(response.status, response.headers, text);
      throw new OdbRestProtocolError('secure login answered a plain envelope', response.status);
    }
    await checkSignature(serverDer, publicKey, response, bytes, 'secure');
    let opened: string;
    try {
      opened = new TextDecoder().decode(await blockDecrypt(keyPair.privateKey, base64.decode(text.trim()), Number.POSITIVE_INFINITY));
    } catch {
      throw new OdbRestProtocolError('secure login answer does not decrypt with the client key', response.status);
    }
    const data = unwrap<SecureLogin & { sessionId: string; symmetricKey: string }>(response.status, response.headers, opened);
    const { sessionId, symmetricKey, ...answer } = data;
    transport.credential = { kind: 'secure', channel: new SecureChannel(sessionId, base64.decode(symmetricKey), symmetricCrypto) };
    return answer;
  }

  async function hybrid(credentials: LoginCredentials, hybrid: HybridLoginOptions = {}): Promise<SessionLogin> {
    // a pinned client needs an answer it can verify: only one sealed to its key is signed
    if (pinned && hybrid.plainAnswer) throw new TypeError('a client pinned to serverKey cannot take the plain hybrid answer (plainAnswer): it is not signed');
    const serverDer = await keyOf('/v2/login/key', 'hybrid');
    const keyPair = hybrid.plainAnswer ? undefined : (hybrid.keyPair ?? (await hybridKeyPair()));
    const sent = await hybridLoginBody(serverDer, JSON.stringify(loginBody(credentials)), keyPair?.publicKey);
    const { response, bytes, text } = await post('/v2/login', sent.body);
    // Read as the real clients do: JSON when it starts with `{` (failures, or no key sent), else `A|B`.
    if (text.startsWith('{') && pinned) {
      unwrap(response.status, response.headers, text); // a failure throws its own error; a plain success is not signed
      throw new OdbRestProtocolError('hybrid login refused: the answer was not sealed to the client key and signed', response.status);
    }
    if (!text.startsWith('{') && keyPair) await checkSignature(serverDer, sent.publicKey!, response, bytes, 'hybrid');
    const envelope = text.startsWith('{') || !keyPair ? text : JSON.stringify(await openHybridAnswer(keyPair.privateKey, text, response.status));
    const data = unwrap<SessionLogin>(response.status, response.headers, envelope);
    transport.credential = { kind: 'session', sessionId: data.sessionId };
    return data;
  }

  return { serverKey: keyOf, secure, hybrid };
}
