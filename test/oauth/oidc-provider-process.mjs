// A certified OpenID provider for the `oidc` tests: node-oidc-provider (oidc-provider from npm),
// started by test/oauth/oidc.ts under Node 24 (the provider supports Node 22 and later) and driven
// over IPC: {id, cmd, args} -> {id, result} | {id, error}. Its own login and consent pages (the
// development interactions) are what the tests' "browser" fills in. Two things are added around it,
// both at the HTTP edge: the next ID token can be re-signed with changed claims or as `alg: none`
// (what a certified provider never issues), and a rotated key replaces the signing key, published
// in the JWKS beside the old one. JWKS requests are counted.
import { createServer } from 'node:http';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { serveCommands } from './commands.mjs';

const HOST = '127.0.0.1';
const b64url = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');

async function signingKey(kid) {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' }, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

const first = await signingKey('key-1');
/** Accounts by login name: the development login page accepts any password. */
const accounts = new Map();
const state = { jwksRequests: 0, tokenRequests: 0, published: [first.publicJwk], signer: undefined, next: undefined, authorizations: [] };

const server = createServer();
await new Promise((resolve) => server.listen(0, HOST, resolve));
const issuer = `http://${HOST}:${server.address().port}`;
let provider;

/** The ID token as the tests asked: claims changed, re-signed (by the rotated key), or unsigned. */
async function reshape(idToken) {
  const next = state.next;
  state.next = undefined;
  if (!next && !state.signer) return idToken;
  const claims = { ...decodeJwt(idToken), ...next?.claims };
  if (next?.algNone) return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
  const key = state.signer ?? first;
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid }).sign(key.privateKey);
}

const commands = {
  /** Registers the clients (their callback addresses are known only now) and starts serving. */
  async start({ clients }) {
    provider = new Provider(issuer, {
      clients,
      jwks: { keys: [first.privateJwk] },
      findAccount: (_ctx, id) => {
        const account = accounts.get(id);
        return account && { accountId: id, claims: () => ({ sub: id, ...account }) };
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name', 'name'] },
      // the requested profile and e-mail claims go into the ID token, as Keycloak, Okta and Entra ID put them
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      features: { devInteractions: { enabled: true } },
    });
    provider.use(async (ctx, next) => {
      if (ctx.path === '/auth' && ctx.method === 'GET') state.authorizations.push(Object.fromEntries(new URL(ctx.href).searchParams));
      if (ctx.path === '/jwks') state.jwksRequests++;
      if (ctx.path === '/token') state.tokenRequests++;
      await next();
      if (ctx.path === '/jwks' && ctx.status === 200) ctx.body = { keys: state.published };
      if (ctx.path === '/token' && ctx.status === 200 && ctx.body?.id_token) ctx.body = { ...ctx.body, id_token: await reshape(ctx.body.id_token) };
    });
    server.on('request', provider.callback());
    return { issuer };
  },
  /** An account the login page accepts: {login, claims: {given_name, family_name, email, email_verified}}. */
  account({ login, claims }) {
    accounts.set(login, claims);
  },
  /** Shapes the next ID token: {claims} to change, {algNone: true} for an unsigned one. */
  next(args) {
    state.next = args;
  },
  /** A new signing key: published in the JWKS beside the old ones, and signing every ID token from now on. */
  async rotate() {
    state.signer = await signingKey(`key-${state.published.length + 1}`);
    state.published = [...state.published, state.signer.publicJwk];
    return state.signer.kid;
  },
  stats() {
    return { jwksRequests: state.jwksRequests, tokenRequests: state.tokenRequests, authorizations: state.authorizations };
  },
};

serveCommands(commands);
