import { SignJWT, importPKCS8 } from 'jose';
import * as v from 'valibot';
import { parseJsonText } from '../http/json.js';
import { identityFromClaims, optionalText } from './identity.js';
import { EndpointsSchema, httpsUrl, nonEmpty, parseAdditionalData } from './settings.js';
import type { CredentialContext, Credentials, ProviderKind } from './types.js';

const AppleSettingsSchema = v.object({
  clientId: v.union(
    [v.pipe(nonEmpty('clientId'), v.transform((id) => [id])), v.pipe(v.array(nonEmpty('clientId')), v.minLength(1))],
    'clientId must be a string or a non-empty list of strings',
  ),
  serverAddress: httpsUrl('serverAddress'),
  teamId: nonEmpty('teamId'),
  keyIdentifier: nonEmpty('keyIdentifier'),
  keyPath: v.optional(nonEmpty('keyPath')),
  /** The .p8 key's PEM text itself, for runtimes without files. */
  privateKey: v.optional(nonEmpty('privateKey')),
  endpoints: v.optional(EndpointsSchema),
});

/** Apple's client secrets may live up to six months; a fresh one per request only needs minutes. */
const SECRET_LIFETIME_S = 300;

async function readKey(settings: v.InferOutput<typeof AppleSettingsSchema>, context: CredentialContext): Promise<CryptoKey> {
  let pem = settings.privateKey;
  if (pem === undefined) {
    if (settings.keyPath === undefined) throw new Error('additionalData: keyPath (or privateKey) is required');
    if (!context.readFile) throw new Error('additionalData.keyPath cannot be read: the service was created without a readFile option');
    try {
      const content = await context.readFile(settings.keyPath);
      pem = typeof content === 'string' ? content : new TextDecoder().decode(content);
    } catch (error) {
      throw new Error(`additionalData.keyPath ${JSON.stringify(settings.keyPath)} cannot be read (${(error as { code?: string }).code ?? 'read error'})`);
    }
  }
  try {
    return await importPKCS8(pem.trim(), 'ES256');
  } catch {
    throw new Error('the Apple key is not an ES256 private key in PKCS#8 PEM form (an AuthKey_*.p8 file)');
  }
}

/**
 * Sign in with Apple: OpenID Connect with `response_mode=form_post` (the callback is a cross-site form
 * POST), a client secret that is an ES256 JWT signed for each token request, and a list of client
 * ids (services id and app ids) that are all accepted as the ID token's audience. Apple sends the
 * user's name only on the first login, in the `user` form field; it is unsigned, so only the name is
 * taken from it.
 */
export const apple: ProviderKind = {
  type: 'apple',
  endpoints: {
    authorization: 'https://appleid.apple.com/auth/authorize',
    token: 'https://appleid.apple.com/auth/token',
    jwks: 'https://appleid.apple.com/auth/keys',
    issuer: 'https://appleid.apple.com',
  },
  scope: 'name email',
  openid: true,
  authorizationParams: { response_mode: 'form_post' },
  credentials: async (data, context): Promise<Credentials> => {
    const settings = parseAdditionalData(AppleSettingsSchema, data);
    const privateKey = await readKey(settings, context);
    return {
      clientIds: settings.clientId,
      serverAddress: settings.serverAddress,
      apple: { teamId: settings.teamId, keyIdentifier: settings.keyIdentifier, privateKey },
      endpoints: settings.endpoints,
    };
  },
  clientSecret: async (credentials, endpoints, nowMs) => {
    const { teamId, keyIdentifier, privateKey } = credentials.apple!;
    const now = Math.floor(nowMs / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: keyIdentifier })
      .setIssuer(teamId)
      .setSubject(credentials.clientIds[0]!)
      .setAudience(endpoints.issuer!)
      .setIssuedAt(now)
      .setExpirationTime(now + SECRET_LIFETIME_S)
      .sign(privateKey);
  },
  identity: async ({ claims, callback }) => {
    let name: string | undefined;
    let surname: string | undefined;
    try {
      const user = parseJsonText(callback.get('user') ?? 'null', 'user') as { name?: { firstName?: unknown; lastName?: unknown } } | null;
      name = optionalText(user?.name?.firstName);
      surname = optionalText(user?.name?.lastName);
    } catch {
      // a malformed `user` field only costs the name
    }
    return identityFromClaims(claims, { name, surname });
  },
};
