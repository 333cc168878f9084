// A local identity provider process for the external-login tests, started by test/oauth/provider.ts.
// Google, Microsoft and Facebook run on oauth2-mock-server (Facebook's graph `me` is its userinfo
// endpoint under Facebook's path); Apple is a small server of its own because it needs what the mock
// cannot do: a form_post callback and verifying the ES256 client-secret JWT.
// Control arrives over IPC: {id, cmd, args} -> {id, result} | {id, error}.
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { SignJWT, exportJWK, generateKeyPair, importJWK, jwtVerify } from 'jose';
import { OAuth2Server } from 'oauth2-mock-server';
import { serveCommands } from './commands.mjs';

const HOST = '127.0.0.1';
/** Server state by id. */
const servers = new Map();
/** A key no provider publishes, for "signed by another key". */
const rogue = await generateKeyPair('RS256');

const b64url = (buffer) => Buffer.from(buffer).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

/** The identity claims of the current user, with one-shot overrides (`null` deletes a claim). */
function idTokenClaims(s, base) {
  const claims = { ...base, sub: s.user.sub, email: s.user.email, given_name: s.user.given_name, family_name: s.user.family_name };
  if (s.tenant) claims.tid = s.tenant;
  for (const [name, value] of Object.entries(s.next.idToken ?? {})) {
    if (value === null) delete claims[name];
    else claims[name] = value;
  }
  delete s.next.idToken;
  for (const name of Object.keys(claims)) if (claims[name] === undefined) delete claims[name];
  return claims;
}


/**
 * The token endpoint's common steps for a code grant: the answer a test asked for next (`tokenStatus`:
 * that HTTP status; `tokenError`: GitHub's way, status 200 with an `error` member), else the grant of
 * the form's code (used once) when its redirect URI and PKCE verifier match; otherwise the answer is
 * sent here and this answers `undefined`.
 */
function takeGrant(s, codes, form, res) {
  if (s.next.tokenStatus) {
    const status = s.next.tokenStatus;
    delete s.next.tokenStatus;
    return void json(res, status, { message: 'the token service is broken' });
  }
  if (s.next.tokenError) {
    const error = s.next.tokenError;
    delete s.next.tokenError;
    return void json(res, 200, { error, error_description: 'The code passed is incorrect or expired.', error_uri: 'https://docs.github.com/apps/troubleshooting' });
  }
  const grant = codes.get(form.get('code'));
  codes.delete(form.get('code'));
  const verifier = form.get('code_verifier') ?? '';
  if (!grant || grant.redirectUri !== form.get('redirect_uri') || b64url(createHash('sha256').update(verifier).digest()) !== grant.challenge) {
    return void json(res, 400, { error: 'invalid_grant' });
  }
  return grant;
}

/** A token signed by the rogue key but naming the provider's real key id. */
function signRogue(claims, kid) {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(rogue.privateKey);
}

function clientOf(req) {
  const header = req.headers.authorization ?? '';
  if (header.startsWith('Basic ')) {
    const [id, secret] = Buffer.from(header.slice(6), 'base64').toString().split(':').map(decodeURIComponent);
    return { id, secret };
  }
  return { id: req.body?.client_id, secret: req.body?.client_secret };
}

async function startMock(s) {
  const facebook = s.kind === 'facebook';
  const paths = facebook ? { authorize: '/v19.0/dialog/oauth', token: '/v19.0/oauth/access_token', userinfo: '/v19.0/me' } : {};
  const server = new OAuth2Server(undefined, undefined, { endpoints: paths });
  const key = await server.issuer.keys.generate('RS256');
  s.kid = key.kid;
  await server.start(0, HOST);
  const base = `http://${HOST}:${server.address().port}`;
  s.issuer = s.tenant ? `${base}/${s.tenant}/v2.0` : base;
  server.issuer.url = s.issuer;
  const service = server.service;
  service.on('beforeAuthorizeRedirect', (_uri, req) => {
    s.lastNonce = req.query.nonce;
    s.authorizations.push(Object.fromEntries(new URL(req.url, base).searchParams));
  });
  service.on('beforeTokenSigning', (token) => {
    if ('scope' in token.payload) return; // the access token; only the ID token is shaped
    const claims = idTokenClaims(s, token.payload);
    for (const name of Object.keys(token.payload)) delete token.payload[name];
    Object.assign(token.payload, claims);
  });
  service.on('beforeResponse', (response, req) => {
    s.tokenRequests++;
    const client = clientOf(req);
    s.secrets.add(client.secret);
    if (client.id !== s.clientId || client.secret !== s.clientSecret) {
      response.statusCode = 401;
      response.body = { error: 'invalid_client' };
      return;
    }
    if (s.next.tokenStatus) {
      response.statusCode = s.next.tokenStatus;
      response.body = { message: 'the token service is broken' };
      delete s.next.tokenStatus;
      return;
    }
    if (s.rogueToken) {
      response.body.id_token = s.rogueToken;
      s.rogueToken = undefined;
    }
    if (facebook) {
      delete response.body.id_token; // Facebook Login is plain OAuth 2.0
      delete response.body.refresh_token;
      s.accessTokens.add(response.body.access_token);
    }
  });
  service.on('beforeUserinfo', (response, req) => {
    const token = (req.headers.authorization ?? '').replace(/^Bearer /i, '');
    const proof = new URL(req.url, base).searchParams.get('appsecret_proof');
    if (!s.accessTokens.has(token)) {
      response.statusCode = 400;
      response.body = { error: { message: 'Invalid OAuth access token.', type: 'OAuthException', code: 190 } };
    } else if (proof !== createHmac('sha256', s.clientSecret).update(token).digest('hex')) {
      response.statusCode = 400;
      response.body = { error: { message: 'Invalid appsecret_proof', type: 'GraphMethodException', code: 100 } };
    } else if (s.next.userinfoStatus) {
      response.statusCode = s.next.userinfoStatus;
      response.body = { error: { message: 'graph is broken', type: 'OAuthException', code: 2 } };
      delete s.next.userinfoStatus;
    } else {
      response.body = { id: s.user.sub, first_name: s.user.given_name, last_name: s.user.family_name, email: s.user.email };
    }
  });
  s.stop = () => server.stop();
  const at = (path) => `${base}${path}`;
  s.endpoints = facebook
    ? { authorization: at(paths.authorize), token: at(paths.token), userinfo: at(paths.userinfo) }
    : { authorization: at('/authorize'), token: at('/token'), jwks: at('/jwks'), issuer: s.tenant ? `${base}/{tenantid}/v2.0` : base };
}

// ---- Apple ----------------------------------------------------------------------------------

const escapeHtml = (value) => String(value).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function readBody(req) {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

function json(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function startApple(s) {
  const signing = await generateKeyPair('RS256', { extractable: true });
  const publicJwk = { ...(await exportJWK(signing.publicKey)), kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };
  s.kid = publicJwk.kid;
  const clientKey = await importJWK(s.apple.publicJwk, 'ES256');
  const codes = new Map();
  const seen = new Set();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, s.issuer);
    try {
      if (req.method === 'GET' && url.pathname === '/auth/keys') return json(res, 200, { keys: [publicJwk] });
      if (req.method === 'GET' && url.pathname === '/auth/authorize') {
        const q = Object.fromEntries(url.searchParams);
        s.authorizations.push(q);
        s.lastNonce = q.nonce;
        if (q.client_id !== s.clientId || q.response_type !== 'code' || q.response_mode !== 'form_post' || !q.redirect_uri) {
          return json(res, 400, { error: 'invalid_request' });
        }
        const code = randomUUID();
        codes.set(code, { clientId: q.client_id, redirectUri: q.redirect_uri, nonce: q.nonce, challenge: q.code_challenge, sub: s.user.sub });
        const fields = { code, state: q.state };
        if (!seen.has(s.user.sub)) {
          seen.add(s.user.sub); // Apple sends the name only the first time
          fields.user = JSON.stringify({ name: { firstName: s.user.given_name, lastName: s.user.family_name }, email: s.user.email });
        }
        const inputs = Object.entries(fields)
          .filter(([, value]) => value !== undefined)
          .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
          .join('');
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end(`<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" action="${escapeHtml(q.redirect_uri)}">${inputs}</form></body></html>`);
      }
      if (req.method === 'POST' && url.pathname === '/auth/token') {
        s.tokenRequests++;
        const form = new URLSearchParams(await readBody(req));
        s.secrets.add(form.get('client_secret'));
        try {
          const { protectedHeader } = await jwtVerify(form.get('client_secret') ?? '', clientKey, {
            algorithms: ['ES256'],
            issuer: s.apple.teamId,
            subject: form.get('client_id') ?? '',
            audience: s.issuer,
          });
          if (protectedHeader.kid !== s.apple.keyId || form.get('client_id') !== s.clientId) throw new Error('wrong key id or client');
          s.verifiedSecrets++;
        } catch {
          return json(res, 400, { error: 'invalid_client' });
        }
        const grant = takeGrant(s, codes, form, res);
        if (!grant) return;
        const claims = idTokenClaims(s, { iss: s.issuer, aud: grant.clientId, nonce: grant.nonce, iat: now(), exp: now() + 600, email_verified: 'true' });
        delete claims.given_name; // Apple's ID token carries no names
        delete claims.family_name;
        const idToken = s.rogueToken ?? (await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: s.kid }).sign(signing.privateKey));
        s.rogueToken = undefined;
        return json(res, 200, { access_token: randomUUID(), token_type: 'Bearer', expires_in: 3600, refresh_token: randomUUID(), id_token: idToken });
      }
      json(res, 404, { error: 'not_found' });
    } catch (error) {
      json(res, 500, { error: 'server_error', error_description: String(error) });
    }
  });
  await new Promise((resolve) => server.listen(0, HOST, resolve));
  s.issuer = `http://${HOST}:${server.address().port}`;
  s.stop = () => new Promise((resolve) => server.close(resolve));
  s.endpoints = { authorization: `${s.issuer}/auth/authorize`, token: `${s.issuer}/auth/token`, jwks: `${s.issuer}/auth/keys`, issuer: s.issuer };
}

// ---- GitHub ---------------------------------------------------------------------------------

/**
 * The GitHub shape: OAuth 2.0 without an ID token at /login/oauth/authorize and /login/oauth/access_token
 * (PKCE checked), and the REST API's GET /user and GET /user/emails for the token it issued. The
 * user's `sub` is the numeric account id.
 */
async function startGithub(s) {
  const codes = new Map();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, s.issuer);
    try {
      if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
        const q = Object.fromEntries(url.searchParams);
        s.authorizations.push(q);
        if (q.client_id !== s.clientId || !q.redirect_uri) return json(res, 400, { error: 'invalid_request' });
        const code = randomUUID();
        codes.set(code, { redirectUri: q.redirect_uri, challenge: q.code_challenge, user: s.user });
        const back = new URL(q.redirect_uri);
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.state);
        res.writeHead(302, { location: back.href });
        return res.end();
      }
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        s.tokenRequests++;
        const form = new URLSearchParams(await readBody(req));
        const client = clientOf({ headers: req.headers, body: Object.fromEntries(form) });
        s.secrets.add(client.secret);
        if (client.id !== s.clientId || client.secret !== s.clientSecret) return json(res, 401, { error: 'invalid_client' });
        const grant = takeGrant(s, codes, form, res);
        if (!grant) return;
        const token = `gho_${randomBytes(16).toString('hex')}`;
        s.accessTokens.set(token, grant.user);
        return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      }
      if (req.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) {
        const user = s.accessTokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''));
        if (!user || !req.headers['user-agent']) return json(res, 401, { message: 'Requires authentication' });
        if (s.next.userinfoStatus) {
          const status = s.next.userinfoStatus;
          delete s.next.userinfoStatus;
          return json(res, status, { message: 'Server Error' });
        }
        if (url.pathname === '/user/emails') return json(res, 200, user.emails ?? []);
        return json(res, 200, { login: `user${user.sub}`, id: /^\d+$/.test(user.sub) ? Number(user.sub) : user.sub, name: user.name ?? null, email: null });
      }
      json(res, 404, { message: 'Not Found' });
    } catch (error) {
      json(res, 500, { error: 'server_error', error_description: String(error) });
    }
  });
  await new Promise((resolve) => server.listen(0, HOST, resolve));
  s.issuer = `http://${HOST}:${server.address().port}`;
  s.accessTokens = new Map();
  s.stop = () => new Promise((resolve) => server.close(resolve));
  s.endpoints = { authorization: `${s.issuer}/login/oauth/authorize`, token: `${s.issuer}/login/oauth/access_token`, userinfo: `${s.issuer}/user` };
}

// ---- control --------------------------------------------------------------------------------

const commands = {
  /** {kind, clientId, clientSecret?, tenant?, apple?: {teamId, keyId, publicJwk}} -> {id, endpoints, issuer} */
  async start(args) {
    const s = {
      ...args,
      id: randomUUID(),
      user: { sub: 'user-1' },
      next: {},
      accessTokens: new Set(),
      authorizations: [],
      tokenRequests: 0,
      verifiedSecrets: 0,
      /** Every client_secret a token request carried (Apple must sign a new one each time). */
      secrets: new Set(),
    };
    if (args.kind === 'apple') await startApple(s);
    else if (args.kind === 'github') await startGithub(s);
    else await startMock(s);
    servers.set(s.id, s);
    return { id: s.id, endpoints: s.endpoints, issuer: s.issuer };
  },
  /** The user who "signs in" from now on: {sub, email, given_name, family_name}. */
  user({ id, user }) {
    servers.get(id).user = user;
  },
  /**
   * Shapes the next answers: idToken (claim overrides), rogueKey (sign the next ID token with a key
   * the provider does not publish), tokenStatus, tokenError (a 200 with this `error`, as GitHub answers), userinfoStatus.
   */
  async next({ id, idToken, rogueKey, tokenStatus, tokenError, userinfoStatus }) {
    const s = servers.get(id);
    Object.assign(s.next, JSON.parse(JSON.stringify({ idToken, tokenStatus, tokenError, userinfoStatus })));
    if (rogueKey) {
      s.rogueToken = await signRogue(
        { iss: s.issuer, aud: s.clientId, sub: s.user.sub, nonce: s.lastNonce, iat: now(), exp: now() + 600, ...(s.tenant ? { tid: s.tenant } : {}) },
        s.kid,
      );
    }
  },
  stats({ id }) {
    const s = servers.get(id);
    return { tokenRequests: s.tokenRequests, verifiedSecrets: s.verifiedSecrets, distinctSecrets: s.secrets.size, authorizations: s.authorizations };
  },
  async stop({ id }) {
    await servers.get(id).stop();
  },
};

serveCommands(commands);
