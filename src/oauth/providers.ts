import type { ObjectStore, StoredObject } from '../storage/types.js';
import { apple } from './apple.js';
import { facebook } from './facebook.js';
import { providerFetch } from './provider-fetch.js';
import { github } from './github.js';
import { google } from './google.js';
import { microsoft } from './microsoft.js';
import { oidc } from './oidc.js';
import { isAcceptedUrl, isPlainHttp, mergeEndpoints, parseEndpointsOption } from './settings.js';
import { ENDPOINT_NAMES, PROVIDER_TYPES, type Credentials, type Discovered, type Endpoints, type ExternalLoginOptions, type ExternalProviderOption, type ProviderKind, type ProviderType } from './types.js';

const PROVIDER_KINDS: Record<ProviderType, ProviderKind> = { google, facebook, microsoft, apple, github, oidc };

/** The type of which any number of providers may be configured, each under its own name. */
const MANY: ProviderType = 'oidc';

/** Class of the provider entries in the database (PROTOCOL.md 5.1). */
export const PROVIDER_CLASS = 'OAuthProvider';


/** Path segments a provider name would shadow (`/v1/{name}/callback`, `/v1/auth/{name}`). */
const RESERVED = new Set(['df', 'auth', 'object', 'objects', 'execute', 'callback']);

/** A configured provider, ready for logins. */
export interface ConfiguredProvider {
  /** The configured name, as given. */
  name: string;
  /** The name in lower case: the path segment. */
  key: string;
  kind: ProviderKind;
  entry: StoredObject;
  credentials: Credentials;
  endpoints: Endpoints;
  /** The callback address registered at the provider. */
  redirectUri: string;
  /** Name of the database user new identities are linked to. */
  defaultUser: string | undefined;
  /** Some endpoint is plain http on a loopback host (tests, local development). */
  insecure: boolean;
  /** oauth4webapi's JWKS cache for this provider, shared by all its requests. */
  jwksCache: Record<string, never>;
  /** What the issuer's discovery document said (oidc), read at start. */
  discovered: Discovered | undefined;
}

/** The `externalLogin` option with where the service is mounted. */
export interface ProviderSetup extends ExternalLoginOptions {
  alias: string | undefined;
  userClass: string;
}

/**
 * Reads the configured provider entries from the store and checks everything a login will need, so
 * that a wrong configuration stops the start-up with a message saying what is wrong.
 */
export async function loadProviders(store: ObjectStore, setup: ProviderSetup): Promise<Map<string, ConfiguredProvider>> {
  const configured = new Map<string, ConfiguredProvider>();
  if (!setup.providers?.length) return configured;
  if (!setup.publicUrl) throw new Error('externalLogin.publicUrl (the external https address of the service) is required when externalLogin.providers are configured');
  if (!isAcceptedUrl(setup.publicUrl)) throw new Error('externalLogin.publicUrl must be an https URL (plain http only on localhost)');
  const byType = new Map<ProviderType, string>();
  for (const option of setup.providers) {
    const provider = await loadProvider(store, option, setup).catch((error: unknown) => {
      throw new Error(`OAuth provider ${JSON.stringify(option?.name)}: ${(error as Error).message}`);
    });
    if (configured.has(provider.key)) throw new Error(`externalLogin.providers names ${JSON.stringify(provider.name)} twice (names are compared in lower case)`);
    const other = byType.get(provider.kind.type);
    if (other !== undefined && provider.kind.type !== MANY) {
      throw new Error(`externalLogin.providers: ${JSON.stringify(other)} and ${JSON.stringify(provider.name)} are both of type ${provider.kind.type}; one configuration per type is allowed`);
    }
    byType.set(provider.kind.type, provider.name);
    configured.set(provider.key, provider);
  }
  return configured;
}

async function loadProvider(store: ObjectStore, option: ExternalProviderOption, setup: ProviderSetup): Promise<ConfiguredProvider> {
  if (typeof option?.name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(option.name)) {
    throw new Error('a name of 1 to 64 letters, digits, "_", "." or "-" is required');
  }
  const key = option.name.toLowerCase();
  if (RESERVED.has(key)) throw new Error(`the name is reserved (${[...RESERVED].join(', ')} are)`);
  const { objects } = await store.find({ className: PROVIDER_CLASS, where: { name: option.name }, limit: 2 });
  const entry = objects[0];
  if (!entry) throw new Error(`no ${PROVIDER_CLASS} object with this name in the database`);
  if (objects.length > 1) throw new Error(`several ${PROVIDER_CLASS} objects have this name`);
  const type = entry.fields.type;
  const kind = typeof type === 'string' && Object.hasOwn(PROVIDER_KINDS, type) ? PROVIDER_KINDS[type as ProviderType] : undefined;
  if (!kind) throw new Error(`type ${JSON.stringify(type ?? null)} is not one of ${PROVIDER_TYPES.join(', ')}`);
  // `_additionalData` (an internal field, never serialized) keeps the secrets out of object listings.
  const credentials = await kind.credentials(entry.fields._additionalData ?? entry.fields.additionalData, { readFile: setup.readFile });
  const overrides = option.endpoints === undefined ? undefined : parseEndpointsOption(option.endpoints);
  const discovered = kind.discover ? await kind.discover(credentials, providerFetch(option.name), isPlainHttp(credentials.issuer!)) : undefined;
  const endpoints = mergeEndpoints(kind.endpoints, discovered?.endpoints, credentials.endpoints, overrides);
  for (const name of ['authorization', 'token'] as const) if (!endpoints[name]) throw new Error(`no ${name} endpoint is known`);
  if (kind.openid && !endpoints.jwks) throw new Error('no jwks endpoint is known');
  const defaultUser = await checkDefaultUser(store, entry, setup.userClass);
  const base = (credentials.serverAddress ?? setup.publicUrl!).replace(/\/+$/, '');
  return {
    name: option.name,
    key,
    kind,
    entry,
    credentials,
    endpoints,
    redirectUri: `${base}${setup.alias === undefined ? '' : `/${setup.alias}`}/v1/${key}/callback`,
    defaultUser,
    insecure: ENDPOINT_NAMES.some((name) => name !== 'issuer' && endpoints[name] !== undefined && isPlainHttp(endpoints[name]!)),
    jwksCache: {},
    discovered,
  };
}

async function checkDefaultUser(store: ObjectStore, entry: StoredObject, userClass: string): Promise<string | undefined> {
  const name = entry.fields.defaultUser;
  if (name === undefined || name === null || name === '') return undefined;
  if (typeof name !== 'string') throw new Error('defaultUser must be a user name');
  if ((await store.count(userClass, { Name: name })) === 0) throw new Error(`defaultUser ${JSON.stringify(name)} is not a database user`);
  return name;
}
