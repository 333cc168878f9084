import type { ServiceContext } from '../context.js';
import type { ReadContext } from '../objects/read/index.js';
import type { ServerKeySource } from '../secure/server-key.js';
import type { SymmetricCrypto } from '../secure/symmetric.js';
import type { TokenSigner } from './jwt.js';
import type { LoginLimiter } from './login-limit.js';
import type { Principals } from './principals.js';
import type { SeatCounter } from './seats.js';
import type { TwoFactorLogin } from './two-factor-login.js';

/** What logins, accounts and the secure transport add to the service context (PROTOCOL.md 2-4). */
export interface AuthContext extends ServiceContext {
  /** Finds principals and checks their passwords. */
  readonly principals: Principals;
  /** The failed-login limit. */
  readonly limiter: LoginLimiter;
  /** Two-factor policies and the users' TOTP secrets (PROTOCOL.md 2.6). */
  readonly twoFactor: TwoFactorLogin;
  /** Licence seats (PROTOCOL.md 2.7). */
  readonly seats: SeatCounter;
  /** Signs and verifies `/v2/login` tokens. */
  readonly tokens: TokenSigner;
  /** The RSA key of the secure login (configured, or generated on first use). */
  readonly serverKey: ServerKeySource;
  /** AES-CTR and HMAC of the secure transport. */
  readonly symmetricCrypto: SymmetricCrypto;
}

/** What a login needs: the principal's object is answered as the read path serializes it. */
export type LoginContext = AuthContext & ReadContext;
