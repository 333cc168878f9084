// Prints the TOTP code an authenticator app would show now for a base32 secret, to try two-factor
// login from a shell (docs/security.md, "Two-factor login"):
//   node examples/totp.mjs <base32 secret> [steps ahead]
// A code is accepted once, and one 30-second step of clock drift either way: `1` prints the next
// step's code, usable right after the current one was spent.
import { TOTP } from 'otpauth';

const [secret, ahead = '0'] = process.argv.slice(2);
if (!secret || !/^-?\d+$/.test(ahead)) {
  console.error('usage: node examples/totp.mjs <base32 secret> [steps ahead]');
  process.exit(2);
}
const totp = new TOTP({ secret, algorithm: 'SHA1', digits: 6, period: 30 });
console.log(totp.generate({ timestamp: Date.now() + Number(ahead) * 30_000 }));
