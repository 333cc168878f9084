import type { MailMessage } from '../mail/types.js';
import type { PasswordResetDelivery } from './options.js';

/**
 * The password reset mail (PROTOCOL.md 2.8, with `mail` configured and no `users.sendPasswordReset`):
 * to the user's `Email`, in German when its `Language` is German (`de`, `de-DE`, `de_AT`), else in
 * English; plain text and HTML, every value in the HTML escaped.
 */

/** The user field naming the user's language (a BCP 47 tag such as `de` or `en-GB`). */
export const LANGUAGE_FIELD = 'Language';
/** The user field holding the address a reset mail goes to. */
export const EMAIL_FIELD = 'Email';

interface Wording {
  lang: string;
  subject: string;
  greeting: (name: string) => string;
  body: (minutes: number) => string;
  button: string;
  ignore: string;
}

const WORDING: Record<'en' | 'de', Wording> = {
  en: {
    lang: 'en',
    subject: 'Reset your password',
    greeting: (name) => `Hello ${name},`,
    body: (minutes) => `someone, hopefully you, asked to reset the password of this account. Open this link within ${minutes} minutes to choose a new one:`,
    button: 'Choose a new password',
    ignore: 'If you did not ask for this, ignore this mail: your password stays as it is.',
  },
  de: {
    lang: 'de',
    subject: 'Passwort zurücksetzen',
    greeting: (name) => `Hallo ${name},`,
    body: (minutes) => `jemand, hoffentlich Sie, hat verlangt, das Passwort dieses Kontos zurückzusetzen. Öffnen Sie innerhalb von ${minutes} Minuten diesen Link, um ein neues zu wählen:`,
    button: 'Neues Passwort wählen',
    ignore: 'Wenn Sie das nicht verlangt haben, ignorieren Sie diese Mail: Ihr Passwort bleibt, wie es ist.',
  },
};

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** The address a reset mail would go to: the user's `Email`, when it is one line holding an `@`. */
export function resetAddress(fields: Readonly<Record<string, unknown>>): string | undefined {
  const email = fields[EMAIL_FIELD];
  return typeof email === 'string' && /^[^\s@<>]+@[^\s@<>]+$/.test(email) ? email : undefined;
}

/** The mail for `delivery`, its link made from `template` (`{token}` replaced); `to` from `resetAddress`. */
export function resetMail(delivery: PasswordResetDelivery, to: string, template: string, now: number): Omit<MailMessage, 'from'> {
  const language = delivery.user.fields[LANGUAGE_FIELD];
  const words = WORDING[typeof language === 'string' && /^de([-_]|$)/i.test(language) ? 'de' : 'en'];
  const link = template.replaceAll('{token}', encodeURIComponent(delivery.token));
  const minutes = Math.max(1, Math.round((delivery.expiresAt.getTime() - now) / 60_000));
  const name = delivery.user.name;
  const text = `${words.greeting(name)}\n\n${words.body(minutes)}\n\n${link}\n\n${words.ignore}\n`;
  const html =
    `<!doctype html><html lang="${words.lang}"><body>` +
    `<p>${escapeHtml(words.greeting(name))}</p><p>${escapeHtml(words.body(minutes))}</p>` +
    `<p><a href="${escapeHtml(link)}">${escapeHtml(words.button)}</a></p><p>${escapeHtml(link)}</p>` +
    `<p>${escapeHtml(words.ignore)}</p></body></html>`;
  return { to, subject: words.subject, text, html };
}
