import * as oauth from 'oauth4webapi';
import { checkLicences, startSession } from '../auth/login.js';
import type { LoginContext } from '../auth/context.js';
import { okReply, type Answer, type JsonReply } from '../http/envelope.js';
import type { LoginData } from '../openapi/schemas.js';
import { ApiError } from '../http/errors.js';
import type { ApiRequest } from '../http/request.js';
import { kvKeys } from '../storage/keys.js';
import { isRef, type StoredObject } from '../storage/types.js';
import { identify, type PendingLogin } from './exchange.js';
import { IDENTITY_CLASS, findLink, linkFields, saveLink } from './links.js';
import { loadProviders, type ConfiguredProvider, type ProviderSetup } from './providers.js';
import type { Identity } from './types.js';

const STATE_TTL_MS = 10 * 60_000;
/** External logins one client address may start per state lifetime: each keeps server-side state, unauthenticated. */
const STARTS_PER_ADDRESS = 60;
const DF_UUID_TTL_MS = 15 * 60_000;
const stateKey = kvKeys.oauthState;
const dfUuidKey = kvKeys.dfUuid;
const CREATE_HOOK = 'xApi_DBCreateInit_xApiUserProvider';

/** An identity waiting for `/v1/extLogin`, stored under its dfUuid. */
interface PendingLink {
  provider: string;
  type: string;
  identity: Identity;
}

/**
 * The external login flow of PROTOCOL.md 5.2 and 5.3, written once for every provider: `start`
 * redirects, `callback` turns the provider's answer into a session or a dfUuid, `link` ties a dfUuid
 * to a database user. State, PKCE verifier, nonce and dfUuids live in the key-value store, so
 * nothing depends on cookies and every instance behind one address can finish any flow.
 */
export class ExternalLogin {
  #providers = new Map<string, ConfiguredProvider>();

  constructor(
    private readonly ctx: LoginContext,
    private readonly setup: ProviderSetup,
  ) {}

  /** Reads and checks the provider entries; rejects with a message saying what is wrong. */
  async load(): Promise<void> {
    this.#providers = await loadProviders(this.ctx.store, this.setup);
  }

  provider(name: string): ConfiguredProvider {
    const provider = this.#providers.get(name);
    if (!provider) throw new ApiError('321', `unknown or unconfigured external provider ${JSON.stringify(name)}`);
    return provider;
  }

  /**
   * Step 1: the redirect to the provider, with state, PKCE (S256) and, for OpenID providers, nonce.
   * The state is kept server-side before anyone authenticated, so each client address may start only
   * so many (`303` after that, until the oldest could have expired).
   */
  async start(provider: ConfiguredProvider, appNames: string[], clientAddress: string | undefined): Promise<Answer> {
    if (clientAddress !== undefined) {
      const key = kvKeys.externalLoginsOfAddress(clientAddress);
      if ((await this.ctx.kv.increment(key, STATE_TTL_MS)) > STARTS_PER_ADDRESS) {
        const seconds = Math.max(1, Math.ceil((await this.ctx.kv.ttl(key)) / 1000));
        throw new ApiError('303', `too many external logins started from this address, try again in ${seconds} seconds`, {
          headers: { 'retry-after': String(seconds) },
        });
      }
    }
    const state = oauth.generateRandomState();
    const pending: PendingLogin = {
      provider: provider.key,
      verifier: oauth.generateRandomCodeVerifier(),
      nonce: provider.kind.openid ? oauth.generateRandomNonce() : undefined,
      appNames,
    };
    await this.ctx.kv.set(stateKey(state), JSON.stringify(pending), STATE_TTL_MS);
    const url = new URL(provider.endpoints.authorization);
    const params: Record<string, string | undefined> = {
      client_id: provider.credentials.clientIds[0],
      redirect_uri: provider.redirectUri,
      response_type: 'code',
      scope: provider.credentials.scope ?? provider.kind.scope,
      state,
      nonce: pending.nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      ...provider.kind.authorizationParams,
    };
    for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
    return new Response(null, { status: 302, headers: { location: url.href, 'cache-control': 'no-store' } });
  }

  /** Step 2: the provider's callback. The one-time state is what authenticates it. */
  async callback(request: ApiRequest, provider: ConfiguredProvider, params: URLSearchParams): Promise<JsonReply<LoginData | { dfUuid: string }>> {
    const state = params.get('state');
    if (!state) throw new ApiError('322', 'the callback carries no state');
    const saved = state.length <= 256 ? await this.ctx.kv.take(stateKey(state)) : undefined;
    if (saved === undefined) throw new ApiError('322', 'unknown, expired or already used state');
    const pending = JSON.parse(saved) as PendingLogin;
    if (pending.provider !== provider.key) throw new ApiError('322', `this state was issued for another provider, not ${provider.name}`);
    const identity = await identify(provider, pending, state, params, this.ctx.now());
    const link = await findLink(this.ctx.store, provider.key, identity.subject);
    if (link) return this.#session(await this.#linkedUser(link, 'the database user linked to this identity no longer exists'), pending.appNames);
    if (provider.defaultUser !== undefined) return this.#session(await this.#linkDefault(request, provider, identity), pending.appNames);
    const dfUuid = crypto.randomUUID();
    const waiting: PendingLink = { provider: provider.key, type: provider.kind.type, identity };
    await this.ctx.kv.set(dfUuidKey(dfUuid), JSON.stringify(waiting), DF_UUID_TTL_MS);
    const message = `no database user is assigned to this ${provider.name} identity yet; assign one with POST /v1/extLogin (user, pass, appNames and this dfUuid)`;
    return noStore(okReply({ dfUuid }, message, message));
  }

  /**
   * Step 3: `/v1/extLogin` after the credentials were checked. The dfUuid is consumed only now, so
   * wrong credentials leave it usable (within its 15 minutes and the failed-login limits).
   */
  async link(dfUuid: string, user: StoredObject): Promise<void> {
    const saved = await this.ctx.kv.take(dfUuidKey(dfUuid));
    if (saved === undefined) throw unknownDfUuid();
    const waiting = JSON.parse(saved) as PendingLink;
    await saveLink(this.ctx.store, linkFields(waiting.provider, waiting.type, waiting.identity, user.id));
  }

  /** Whether a dfUuid is waiting (checked before the credentials, so an unknown one costs nothing). */
  async checkDfUuid(dfUuid: string): Promise<void> {
    if (!/^[0-9a-f-]{36}$/.test(dfUuid) || (await this.ctx.kv.get(dfUuidKey(dfUuid))) === undefined) throw unknownDfUuid();
  }

  async #session(user: StoredObject, appNames: string[]): Promise<JsonReply<LoginData>> {
    checkLicences(user, appNames);
    const { data } = await startSession(this.ctx, 'session', user, { user: String(user.fields.Name ?? ''), appNames });
    return noStore(okReply(data));
  }

  async #linkedUser(link: Pick<StoredObject, 'fields'>, missing: string): Promise<StoredObject> {
    const ref = link.fields.user;
    const user = isRef(ref) ? await this.ctx.store.get(ref.$ref) : undefined;
    if (!user || user.className !== this.setup.userClass) throw new ApiError('500', missing);
    return user;
  }

  /**
   * Step 4 of PROTOCOL.md 5.2: a new identity of a provider with a `defaultUser`. The host's
   * `xApi_DBCreateInit_xApiUserProvider` macro sees the link object before it is stored and may
   * assign another user (`userObject.fields.user`); a non-zero return refuses the login.
   */
  async #linkDefault(request: ApiRequest, provider: ConfiguredProvider, identity: Identity): Promise<StoredObject> {
    const defaultUser = await this.ctx.principals.findUser(provider.defaultUser!);
    if (!defaultUser) throw new ApiError('500', `defaultUser of ${provider.name} is not a database user`);
    const userObject = { className: IDENTITY_CLASS, fields: linkFields(provider.key, provider.kind.type, identity, defaultUser.id) };
    const hook = this.ctx.macros.hook(CREATE_HOOK);
    if (hook) {
      const result = await hook(this.ctx.macroContext(request), {
        userObject,
        providerConfig: provider.entry,
        userUuid: identity.subject,
        name: identity.name ?? '',
        surname: identity.surname ?? '',
        email: identity.email ?? '',
      });
      if (result !== undefined && result !== 0) throw new ApiError('403', `${CREATE_HOOK} refused the login (returned ${safeResult(result)})`);
    }
    const user = await this.#linkedUser(userObject, `${CREATE_HOOK} assigned no existing database user`);
    await saveLink(this.ctx.store, { ...userObject.fields, user: { $ref: user.id } });
    return user;
  }
}

function unknownDfUuid(): ApiError {
  return new ApiError('320', 'unknown, expired or already used dfUuid; start the external login again');
}

function safeResult(value: unknown): string {
  return typeof value === 'number' ? String(value) : typeof value;
}

function noStore<T>(reply: JsonReply<T>): JsonReply<T> {
  reply.headers['cache-control'] = 'no-store';
  return reply;
}
