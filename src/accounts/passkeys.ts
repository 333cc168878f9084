import { base64urlnopad } from '@scure/base';
import type { AuthenticationResponseJSON, RegistrationResponseJSON, WebAuthnCredential } from '@simplewebauthn/server';
import * as v from 'valibot';
import { checkLicences, sessionClient, startSession } from '../auth/login.js';
import type { Session } from '../auth/sessions.js';
import type { LoginContext } from '../auth/context.js';
import { okReply, type JsonReply } from '../http/envelope.js';
import { ApiError, clip } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { route } from '../http/router.js';
import { formatStoreTime } from '../objects/read/index.js';
import { kvKeys } from '../storage/keys.js';
import { loadOptional } from '../optional-package.js';
import type { FieldValue, StoredObject } from '../storage/types.js';
import type { PasskeyOptions } from './options.js';
import type { UserAccounts } from './users.js';
import { PASSKEYS, RegisterSchema, LoginOptionsSchema, LoginSchema } from './contract.js';

/** How long a challenge is held (PROTOCOL.md 2.8). */
const CHALLENGE_MS = 5 * 60_000;
const MAX_PASSKEYS = 20;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A stored passkey, one element of the user's `_passkeys`. */
interface StoredPasskey {
  id: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  created: number;
  lastUsed?: number;
}

/** What a challenge was issued for: a registration by one session, or a login (of one user, if named). */
type Challenge = { kind: 'register'; session: string } | { kind: 'login'; user?: string };


export function storedPasskeys(user: StoredObject): StoredPasskey[] {
  const value = user.fields._passkeys;
  return Array.isArray(value) ? (value as unknown as StoredPasskey[]) : [];
}

type WebAuthn = typeof import('@simplewebauthn/server');
let webauthnModule: Promise<WebAuthn> | undefined;

/**
 * `@simplewebauthn/server`, an optional peer: loaded once, when a service with the `passkeys` option
 * starts (its `ready` waits for it, and rejects naming the package when it is not installed).
 */
export const webauthn = (): Promise<WebAuthn> => (webauthnModule ??= loadOptional(import('@simplewebauthn/server'), 'passkeys', '@simplewebauthn/server'));

/**
 * Passkeys (PROTOCOL.md 2.8) through `@simplewebauthn/server`, which does every WebAuthn check: the
 * challenge (taken from the key-value store once, so a replayed or foreign response finds none), the
 * origin, the RP ID, the signature and the counter. Credentials live in the user's `_passkeys`.
 */
export class Passkeys {
  constructor(
    private readonly ctx: LoginContext,
    private readonly users: UserAccounts,
    private readonly options: PasskeyOptions | undefined,
  ) {}

  get #config(): PasskeyOptions {
    if (!this.options) throw new ApiError('403', 'passkeys are not configured on this service (option passkeys: {rpID, rpName, origins})');
    return this.options;
  }

  async #hold(challenge: string, what: Challenge): Promise<void> {
    await this.ctx.kv.set(kvKeys.passkeyChallenge(challenge), JSON.stringify(what), CHALLENGE_MS);
  }

  /** A check for `expectedChallenge`: takes the challenge (single use) and answers whether it was issued for this. */
  #taking(fits: (held: Challenge) => boolean): (challenge: string) => Promise<boolean> {
    return async (challenge) => {
      const raw = challenge.length > 200 ? undefined : await this.ctx.kv.take(kvKeys.passkeyChallenge(challenge));
      return raw !== undefined && fits(JSON.parse(raw) as Challenge);
    };
  }

  async #ownUser(session: Session): Promise<StoredObject> {
    const user = session.principal === 'db' ? await this.ctx.store.get(session.principalId) : undefined;
    if (!user) throw new ApiError('403', 'only database users can hold passkeys');
    return user;
  }

  async registerOptions(request: ApiRequest): Promise<JsonReply> {
    const config = this.#config;
    const user = await this.#ownUser(request.session!);
    const { generateRegistrationOptions } = await webauthn();
    const options = await generateRegistrationOptions({
      rpName: config.rpName,
      rpID: config.rpID,
      userName: String(user.fields.Name ?? request.session!.user),
      userID: encoder.encode(user.id),
      attestationType: 'none',
      excludeCredentials: storedPasskeys(user).map((key) => ({ id: key.id, transports: key.transports })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
      timeout: CHALLENGE_MS,
    });
    await this.#hold(options.challenge, { kind: 'register', session: request.session!.id });
    return okReply(options);
  }

  async register(request: ApiRequest, { response, name }: v.InferOutput<typeof RegisterSchema>): Promise<JsonReply> {
    const config = this.#config;
    const session = request.session!;
    const user = await this.#ownUser(session);
    if (storedPasskeys(user).length >= MAX_PASSKEYS) throw new ApiError('400', `a user holds at most ${MAX_PASSKEYS} passkeys: remove one first`);
    const { verifyRegistrationResponse } = await webauthn();
    let info;
    try {
      const verified = await verifyRegistrationResponse({
        response: response as unknown as RegistrationResponseJSON,
        expectedChallenge: this.#taking((held) => held.kind === 'register' && held.session === session.id),
        expectedOrigin: [...config.origins],
        expectedRPID: config.rpID,
        requireUserVerification: false,
      });
      if (!verified.verified) throw new Error('the response did not verify');
      info = verified.registrationInfo;
    } catch (error) {
      throw new ApiError('400', `passkey registration refused: ${clip(error instanceof Error ? error.message : String(error), 200)}`);
    }
    const credential = info.credential;
    const passkey: StoredPasskey = {
      id: credential.id,
      publicKey: base64urlnopad.encode(credential.publicKey),
      counter: credential.counter,
      transports: credential.transports ?? [],
      name: name ?? `passkey ${formatStoreTime(this.ctx.now())}`,
      created: this.ctx.now(),
    };
    await this.users.change(user, (fields) => {
      const held = Array.isArray(fields._passkeys) ? (fields._passkeys as unknown as StoredPasskey[]) : [];
      if (held.some((key) => key.id === passkey.id)) throw new ApiError('400', 'this passkey is registered already');
      return { ...fields, _passkeys: [...held, passkey] as unknown as FieldValue };
    });
    return okReply(describe(passkey), 'passkey registered');
  }

  async loginOptions(request: ApiRequest, body: v.InferOutput<typeof LoginOptionsSchema>): Promise<JsonReply> {
    const config = this.#config;
    const { generateAuthenticationOptions } = await webauthn();
    // no allowCredentials, whoever is named: the answer never tells whether a user or its passkeys exist
    const options = await generateAuthenticationOptions({ rpID: config.rpID, userVerification: 'preferred', timeout: CHALLENGE_MS });
    await this.#hold(options.challenge, { kind: 'login', ...(body?.user === undefined ? {} : { user: body.user }) });
    return okReply(options);
  }

  /** A login as `/v1/login` answers it; a passkey is two factors (no `341`/`340`). Licences, seats and the failed-login limit apply. */
  async login(request: ApiRequest, body: v.InferOutput<typeof LoginSchema>): Promise<JsonReply> {
    const config = this.#config;
    const { response, appNames } = body;
    const user = await this.#holder(response);
    const name = String(user?.fields.Name ?? '');
    const admission = await this.ctx.limiter.admit(name || `~passkey:${clip(response.id, 64)}`, request.clientAddress);
    const passkey = user && storedPasskeys(user).find((key) => key.id === response.id);
    const { verifyAuthenticationResponse } = await webauthn();
    let newCounter: number;
    try {
      if (!user || !passkey) throw new Error('no user holds this passkey');
      const credential: WebAuthnCredential = {
        id: passkey.id,
        publicKey: base64urlnopad.decode(passkey.publicKey) as WebAuthnCredential['publicKey'],
        counter: passkey.counter,
        transports: passkey.transports as WebAuthnCredential['transports'],
      };
      const verified = await verifyAuthenticationResponse({
        response: response as unknown as AuthenticationResponseJSON,
        expectedChallenge: this.#taking((held) => held.kind === 'login' && (held.user === undefined || held.user === name)),
        expectedOrigin: [...config.origins],
        expectedRPID: config.rpID,
        credential,
        requireUserVerification: false,
      });
      if (!verified.verified) throw new Error('the response did not verify');
      if (user.fields._disabled === true) throw new Error('no user holds this passkey');
      newCounter = verified.authenticationInfo.newCounter;
    } catch (error) {
      // counted as a failed login, as a wrong password is
      await admission.failed();
      throw new ApiError('302', `passkey login refused: ${clip(error instanceof Error ? error.message : String(error), 200)}`);
    }
    await admission.succeeded();
    checkLicences(user, appNames);
    const now = this.ctx.now();
    const stored = await this.users.change(user, (fields) => ({
      ...fields,
      _passkeys: storedPasskeys({ ...user, fields }).map((key) => (key.id === passkey.id ? { ...key, counter: newCounter, lastUsed: now } : key)) as unknown as FieldValue,
    }));
    const { data } = await startSession(this.ctx, 'session', stored, { user: name, appNames }, { client: sessionClient(body, request.clientAddress) });
    return okReply(data);
  }

  /** The user a login response names: its `userHandle` (the user id registration gave the authenticator). */
  async #holder(response: { response: Record<string, unknown> }): Promise<StoredObject | undefined> {
    const handle = response.response.userHandle;
    if (typeof handle !== 'string' || handle.length > 200) return undefined;
    let id: string;
    try {
      id = decoder.decode(base64urlnopad.decode(handle.replace(/=+$/, '')));
    } catch {
      return undefined;
    }
    const user = await this.ctx.store.get(id);
    return user?.className === this.users.userClass ? user : undefined;
  }

  async list(request: ApiRequest): Promise<JsonReply> {
    void this.#config;
    const user = await this.#ownUser(request.session!);
    const elements = storedPasskeys(user).map(describe);
    return okReply({ '~Count': elements.length, '~UnfilteredCount': elements.length, '~Elements': elements });
  }

  async remove(request: ApiRequest, id: string): Promise<JsonReply> {
    void this.#config;
    const user = await this.#ownUser(request.session!);
    if (!storedPasskeys(user).some((key) => key.id === id)) throw new ApiError('404', 'you hold no passkey with this id');
    await this.users.change(user, (fields) => ({ ...fields, _passkeys: storedPasskeys({ ...user, fields }).filter((key) => key.id !== id) as unknown as FieldValue }));
    return okReply({}, 'passkey removed');
  }
}

function describe(passkey: StoredPasskey) {
  return {
    '~ObjectID': passkey.id,
    Name: passkey.name,
    Created: formatStoreTime(passkey.created),
    LastUsed: passkey.lastUsed === undefined ? null : formatStoreTime(passkey.lastUsed),
    Transports: passkey.transports,
  };
}

/** The passkey routes (PROTOCOL.md 2.8); `403` each while the service has no `passkeys` option. */
export function passkeyRoutes(passkeys: Passkeys) {
  return [
    route({
      ...PASSKEYS.postPasskeyRegisterOptions,
      auth: 'session',
      summary: 'WebAuthn creation options for a new passkey of the session user (the challenge is held 5 minutes, once)',
      answer: 'PublicKeyCredentialCreationOptionsJSON (for startRegistration of @simplewebauthn/browser)',
      handler: (request) => passkeys.registerOptions(request),
    }),
    route({
      ...PASSKEYS.postPasskeyRegister,
      auth: 'session',
      summary: "Stores the new passkey in the session user's _passkeys",
      answer: '~ObjectID (the credential id), Name, Created, LastUsed, Transports',
      handler: (request, { body }) => passkeys.register(request, body),
    }),
    route({
      ...PASSKEYS.postPasskeyLoginOptions,
      auth: 'none',
      summary: 'WebAuthn request options for a passkey login (the challenge is held 5 minutes, once)',
      answer: 'PublicKeyCredentialRequestOptionsJSON (for startAuthentication of @simplewebauthn/browser)',
      handler: (request, { body }) => passkeys.loginOptions(request, body),
    }),
    route({
      ...PASSKEYS.postPasskeyLogin,
      auth: 'none',
      summary: 'Logs in with a passkey: a plain session, as /v1/login answers (two factors)',
      answer: 'sessionId, user, databaseName and expiresAt, as /v1/login',
      handler: (request, { body }) => passkeys.login(request, body),
    }),
    route({
      ...PASSKEYS.getPasskeys,
      auth: 'session',
      summary: "The session user's passkeys",
      examples: { answer: { '~Count': 0, '~UnfilteredCount': 0, '~Elements': [] } },
      answer: 'a set of {~ObjectID, Name, Created, LastUsed, Transports}',
      handler: (request) => passkeys.list(request),
    }),
    route({
      ...PASSKEYS.deletePasskeysById,
      auth: 'session',
      summary: 'Removes one of the session user\'s passkeys',
      answer: 'nothing ({})',
      handler: (request, { params: { id } }) => passkeys.remove(request, id),
    }),
  ];
}
