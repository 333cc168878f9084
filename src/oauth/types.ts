
/** The provider types of PROTOCOL.md 5.1. */
export const PROVIDER_TYPES = ['google', 'facebook', 'microsoft', 'apple', 'github', 'oidc'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/**
 * Where a provider lives. Every member can be overridden (provider entry `additionalData.endpoints`
 * or the `externalLogin.providers[].endpoints` option), so tests and hosts can use a compatible local server.
 */
export interface Endpoints {
  authorization: string;
  token: string;
  /** JWKS of the ID-token signing keys (OpenID providers). */
  jwks?: string;
  /** Expected `iss` of ID tokens; Microsoft's may contain `{tenantid}`. */
  issuer?: string;
  /** The user endpoint read after the code exchange (Facebook's graph `me`). */
  userinfo?: string;
}
export const ENDPOINT_NAMES = ['authorization', 'token', 'jwks', 'issuer', 'userinfo'] as const;

/** Who the provider says the user is. Only `subject` identifies; the rest is informational. */
export interface Identity {
  subject: string;
  name?: string;
  surname?: string;
  email?: string;
}

/** A provider entry's `additionalData`, checked and made usable. */
export interface Credentials {
  /** The first is sent as `client_id`; every one is accepted as ID-token audience (Apple's list). */
  clientIds: string[];
  /** google, facebook, microsoft. */
  clientSecret?: string;
  /** apple: signs the per-request client secret. */
  apple?: { teamId: string; keyIdentifier: string; privateKey: CryptoKey };
  /** apple: base of the callback address instead of `publicUrl`. */
  serverAddress?: string;
  /** Endpoint overrides from the provider entry. */
  endpoints?: Partial<Endpoints>;
  /** oidc: the issuer whose discovery document names the endpoints. */
  issuer?: string;
  /** oidc: the scopes asked for instead of the type's. */
  scope?: string;
}

/** How the client authenticates the code exchange: `client_secret_post`, `client_secret_basic`, or a public client. */
export type TokenAuth = 'post' | 'basic' | 'none';

/** What a provider's discovery document adds to its entry (oidc), read once at start. */
export interface Discovered {
  endpoints: Partial<Endpoints>;
  /** `id_token_signing_alg_values_supported` without `none`. */
  algorithms?: string[];
  tokenAuth: TokenAuth;
}

/**
 * The token endpoint's answer (RFC 6749 5.1), as oauth4webapi checked it. Written here rather than
 * taken from oauth4webapi, an ES module only: CommonJS declarations that name its types do not compile
 * under `moduleResolution: node16` (TS1479).
 */
export interface TokenAnswer {
  readonly access_token: string;
  readonly token_type: string;
  readonly id_token?: string;
  readonly refresh_token?: string;
  readonly scope?: string;
  readonly expires_in?: number;
  readonly [member: string]: unknown;
}

/** The claims of a validated ID token (OpenID Connect Core 2), as oauth4webapi checked them. */
export interface IdTokenClaims {
  readonly iss: string;
  readonly sub: string;
  readonly aud: string | readonly string[];
  readonly iat: number;
  readonly exp: number;
  readonly nonce?: string;
  readonly [claim: string]: unknown;
}

/** What `identity` gets once the code has been exchanged (and, for OpenID providers, the ID token checked). */
export interface TokenResult {
  tokens: TokenAnswer;
  /** The validated ID-token claims (OpenID providers). */
  claims: IdTokenClaims | undefined;
  /** The callback parameters (Apple's first-login `user` field is one). */
  callback: URLSearchParams;
  credentials: Credentials;
  endpoints: Endpoints;
  /** Fetches through the same guarded transport as the code exchange. */
  fetch: ProviderFetch;
}

export type ProviderFetch = (url: string, init?: RequestInit) => Promise<Response>;

/** Reads a file (Apple's `.p8` key); the core reads no files itself. */
export type ReadFile = (path: string) => Promise<string | Uint8Array>;

/** Inputs the provider files need from the service to read their `additionalData`. */
export interface CredentialContext {
  readFile: ReadFile | undefined;
}

/** One configured provider: the name of a provider entry, and optional endpoint overrides. */
export interface ExternalProviderOption {
  name: string;
  endpoints?: Partial<Endpoints>;
}

/** External login (PROTOCOL.md 5), the `externalLogin` service option. */
export interface ExternalLoginOptions {
  /**
   * Each `name` selects the `OAuthProvider` object of that name in the store; `endpoints` optionally
   * points the provider elsewhere (a local identity server).
   */
  providers?: readonly ExternalProviderOption[];
  /**
   * The external https address of the service root (base path included, alias not), e.g.
   * `https://api.example.com/api`. OAuth callbacks are `{publicUrl}/{alias}/v1/{name}/callback`.
   */
  publicUrl?: string;
  /**
   * Reads a file, for Apple's `.p8` key named by `additionalData.keyPath`. `odbrest serve` supplies it;
   * Node hosts pass `readTextFile` from `odbrest/node`.
   */
  readFile?: ReadFile;
}

/**
 * One provider type: data plus two small functions, "code -> token" (`clientSecret`: how the
 * client authenticates the exchange) and "token -> identity" (`identity`). The flow is in flow.ts.
 */
export interface ProviderKind {
  type: ProviderType;
  /** The provider's public endpoints (none for oidc: its discovery names them). */
  endpoints: Partial<Endpoints>;
  scope: string;
  /** OpenID Connect: a nonce is sent and an ID token is required and validated. */
  openid: boolean;
  /** Extra authorization-request parameters (Apple: `response_mode=form_post`). */
  authorizationParams?: Record<string, string>;
  /** Reads and checks `additionalData`; throws an Error naming the member that is wrong. */
  credentials(data: unknown, context: CredentialContext): Promise<Credentials>;
  /** The `client_secret` sent with the code (Apple: a fresh ES256 JWT). */
  clientSecret(credentials: Credentials, endpoints: Endpoints, nowMs: number): Promise<string>;
  /** oidc: reads the issuer's `/.well-known/openid-configuration` (at start; the answer is kept). */
  discover?(credentials: Credentials, fetch: ProviderFetch, insecure: boolean): Promise<Discovered>;
  /** The `iss` an ID token must carry, given its unverified claims (Microsoft: from `tid`). */
  issuer?(claims: Record<string, unknown>, endpoints: Endpoints): string | undefined;
  identity(result: TokenResult): Promise<Identity>;
}
