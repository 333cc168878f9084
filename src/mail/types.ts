/**
 * Mail leaving the service (PROTOCOL.md 2.8, 7): what a `Mailer` sends, the `mail` option, and what a
 * macro's `ctx.mail` takes. The core only builds messages; the transport is the host's: `smtpMailer`
 * of `odbrest/node` (nodemailer, an optional peer), or any object with a `send` on another runtime.
 */

/** A file attached to a mail: its bytes, the name the recipient sees, and its media type. */
export interface MailAttachment {
  filename: string;
  content: Uint8Array;
  /** Default: what the transport guesses from `filename`. */
  contentType?: string;
}

/** One mail as the service hands it to the `Mailer`. */
export interface MailMessage {
  /** The sender: the `mail.from` option. */
  from: string;
  to: string | readonly string[];
  subject: string;
  /** The plain-text body. */
  text: string;
  /** The HTML body, when there is one (every value in it escaped). */
  html?: string;
  attachments?: readonly MailAttachment[];
}

/** Sends mail. Resolves once the mail server has accepted the message; rejects when it did not. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** The `mail` option: mail for password resets (PROTOCOL.md 2.8) and macros (`ctx.mail`). Default: none. */
export interface MailOptions {
  /** The transport: on Node `await smtpMailer('smtp://user:pass@host:587')` of `odbrest/node`, or the host's own. */
  mailer: Mailer;
  /** The sender of every mail: `"Example App" <noreply@example.com>`. */
  from: string;
  /**
   * The link a password reset mail holds, `{token}` standing for the token:
   * `https://app.example.com/reset?token={token}`. Without it (and without `users.sendPasswordReset`)
   * no reset mail is sent.
   */
  resetLink?: string;
  /** Further tries of a reset mail the server did not take, each after twice the wait of the one before. Default 3. */
  retries?: number;
  /** The wait before the first retry, in ms. Default 1000 (then 2 s, 4 s). */
  retryDelayMs?: number;
}

/** A file object attached by its id: read through the file class's read rule of the macro's store. */
export interface FileAttachment {
  fileId: string;
  /** Default: the file's `Name`. */
  filename?: string;
}

/** A mail a macro sends: `from` is the `mail.from` option. */
export interface MacroMailMessage {
  to: string | readonly string[];
  subject: string;
  text: string;
  html?: string;
  attachments?: ReadonlyArray<MailAttachment | FileAttachment>;
}

/** `ctx.mail` of a macro. */
export interface MacroMail {
  /**
   * Sends one mail from `mail.from`, once (no retry: the macro decides what a failure means). Resolves
   * when the mail server took it; rejects when it did not, when `mail` is not configured, or (an
   * `ApiError` `404`) when an attached file does not exist or the macro's store may not read it.
   */
  send(message: MacroMailMessage): Promise<void>;
}
