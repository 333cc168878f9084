import * as v from 'valibot';
import { ApiError } from '../http/errors.js';
import { parseInput } from '../http/validate.js';
import { ENDPOINT_NAMES, type Credentials, type Endpoints, type ProviderKind } from './types.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Addresses the service talks to or sends browsers to must be https. Plain http is accepted only on
 * a loopback host, so a provider or service on the same machine (tests, local development) works
 * without weakening anything that crosses a network.
 */
export function isAcceptedUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
}

export function isPlainHttp(value: string): boolean {
  return value.startsWith('http:');
}

export const nonEmpty = (name: string) => v.pipe(v.string(`${name} must be a string`), v.trim(), v.minLength(1, `${name} must not be empty`));

export const httpsUrl = (name: string) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.check(isAcceptedUrl, `${name} must be an https URL (plain http only on localhost)`),
  );

/** `endpoints` overrides; `issuer` is an identifier, not fetched, so only its presence is checked. */
export const EndpointsSchema = v.strictObject(
  {
    authorization: v.optional(httpsUrl('endpoints.authorization')),
    token: v.optional(httpsUrl('endpoints.token')),
    jwks: v.optional(httpsUrl('endpoints.jwks')),
    userinfo: v.optional(httpsUrl('endpoints.userinfo')),
    issuer: v.optional(nonEmpty('endpoints.issuer')),
  },
  `endpoints may only name ${ENDPOINT_NAMES.join(', ')}`,
);

const ENDPOINTS_OPTION = 'externalLogin.providers[].endpoints';

/**
 * The `externalLogin.providers[].endpoints` option: an object (options are values, not JSON text), with
 * errors naming the option rather than `additionalData`.
 */
export function parseEndpointsOption(value: unknown): Partial<Endpoints> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${ENDPOINTS_OPTION} must be an object`);
  try {
    return parseInput(EndpointsSchema, value, ENDPOINTS_OPTION);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    // The schema's messages name `endpoints.<member>` as it sits in additionalData.
    throw new Error(error.message.replace(/^endpoints\b/, ENDPOINTS_OPTION));
  }
}

/** `additionalData` of google, facebook and microsoft entries (PROTOCOL.md 5.1). */
const SecretSettingsSchema = v.object({
  clientId: nonEmpty('clientId'),
  clientSecret: nonEmpty('clientSecret'),
  endpoints: v.optional(EndpointsSchema),
});

/** Parses `additionalData` (a JSON string or an object) with `schema`; errors name the member. */
export function parseAdditionalData<S extends v.GenericSchema>(schema: S, data: unknown): v.InferOutput<S> {
  let value = data;
  if (typeof data === 'string') {
    try {
      value = JSON.parse(data);
    } catch {
      throw new Error('additionalData is not valid JSON');
    }
  }
  if (value === undefined || value === null) throw new Error('additionalData is missing');
  try {
    return parseInput(schema, value, 'additionalData');
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw new Error(error.message.startsWith('additionalData') ? error.message : `additionalData: ${error.message}`);
  }
}

/** The credentials of the three providers that authenticate with a client secret. */
async function secretCredentials(data: unknown): Promise<Credentials> {
  const settings = parseAdditionalData(SecretSettingsSchema, data);
  return { clientIds: [settings.clientId], clientSecret: settings.clientSecret, endpoints: settings.endpoints };
}

/** How google, facebook and microsoft authenticate: a client id and secret from `additionalData`, the secret sent as is. */
export const secretClient: Pick<ProviderKind, 'credentials' | 'clientSecret'> = {
  credentials: secretCredentials,
  clientSecret: async (credentials) => credentials.clientSecret!,
};

/** Merges defaults with overrides, later ones winning. */
export function mergeEndpoints(...layers: Array<Partial<Endpoints> | undefined>): Endpoints {
  const merged: Partial<Endpoints> = {};
  for (const layer of layers) {
    for (const name of ENDPOINT_NAMES) if (layer?.[name] !== undefined) merged[name] = layer[name];
  }
  return merged as Endpoints;
}
