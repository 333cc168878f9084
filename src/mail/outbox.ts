import * as v from 'valibot';
import { ApiError } from '../http/errors.js';
import { parseInput } from '../http/validate.js';
import { contentTypeOf, nameOf } from '../files/file-fields.js';
import type { FileSettings } from '../files/settings.js';
import type { ObjectStore } from '../storage/types.js';
import type { FileAttachment, MacroMail, MacroMailMessage, MailAttachment, MailMessage, MailOptions } from './types.js';

/** What a mail's fate is counted as (`odbrest.mail.messages`, src/telemetry.ts). */
export type MailOutcome = 'sent' | 'failed' | 'retried';

/** The most bytes of attachments one mail may carry (what common mail servers accept), counted before a file is read. */
export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
const DEFAULT_RETRIES = 3;
const DEFAULT_RETRY_DELAY_MS = 1000;
const MAX_RETRIES = 10;

/** A mail the server did not take after every try; `onError` gets it with the request's id. */
export class MailDeliveryError extends Error {
  override name = 'MailDeliveryError';
  constructor(subject: string, attempts: number, cause: unknown) {
    super(`mail "${subject}" was not delivered after ${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** One line of a header: no line break (a header injection) and not empty. */
const headerText = (member: string) =>
  v.pipe(v.string(`${member} must be a string`), v.minLength(1, `${member} must not be empty`), v.maxLength(998, `${member} must be at most 998 characters`), v.regex(/^[^\r\n]*$/, `${member} must be one line`));
const Recipients = v.union([headerText('to'), v.pipe(v.array(headerText('each of to')), v.minLength(1, 'to must name a recipient'))], 'to must be an address or a list of addresses');
const Attachment = v.union(
  [
    v.object({ fileId: v.string('fileId must be a string'), filename: v.optional(headerText('filename')) }),
    v.object({ filename: headerText('filename'), content: v.instance(Uint8Array, 'content must be a Uint8Array'), contentType: v.optional(headerText('contentType')) }),
  ],
  'each attachment must be {fileId, filename?} or {filename, content, contentType?}',
);
const MacroMailSchema = v.object({
  to: Recipients,
  subject: headerText('subject'),
  text: v.string('text must be a string'),
  html: v.optional(v.string('html must be a string')),
  attachments: v.optional(v.array(Attachment, 'attachments must be a list'), []),
});

/**
 * Mail leaving the service: `deliver` for mail sent after an answer (a password reset), tried again
 * with backoff and never awaited by the request; `forMacros` for a macro's `ctx.mail`, sent once and
 * awaited. Each outcome is counted; a mail given up is reported to `onError` with the request's id.
 */
export class Outbox {
  readonly #retries: number;
  readonly #delayMs: number;
  /** The tries waiting for their timer (the first, or a retry). */
  readonly #waiting = new Set<{ timer: ReturnType<typeof setTimeout>; cancel(): void }>();
  #closed = false;

  constructor(
    readonly options: MailOptions | undefined,
    private readonly files: FileSettings,
    private readonly report: { onError(error: unknown, about?: { requestId?: string }): void; count(outcome: MailOutcome): void },
  ) {
    this.#retries = options?.retries ?? DEFAULT_RETRIES;
    this.#delayMs = options?.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    if (!options) return;
    if (typeof options.mailer?.send !== 'function') throw new Error('mail.mailer must be an object with a send(message) method (smtpMailer of odbrest/node)');
    if (typeof options.from !== 'string' || options.from === '') throw new Error('mail.from must be the sender address, e.g. noreply@example.com');
    if (!Number.isInteger(this.#retries) || this.#retries < 0 || this.#retries > MAX_RETRIES) throw new Error(`mail.retries must be a whole number from 0 to ${MAX_RETRIES}`);
    if (!Number.isFinite(this.#delayMs) || this.#delayMs < 0) throw new Error('mail.retryDelayMs must be a number of ms, 0 or more');
    if (options.resetLink !== undefined && !options.resetLink.includes('{token}')) throw new Error('mail.resetLink must hold {token}, e.g. https://app.example.com/reset?token={token}');
  }

  /**
   * Sends `message` (its `from` added) after the current answer, trying again after a failure with
   * doubling waits; resolves when it is sent or given up, never rejects. `close` gives up the tries
   * still waiting.
   */
  deliver(message: Omit<MailMessage, 'from'>, requestId: string | undefined): Promise<void> {
    const options = this.options!;
    const mail = { ...message, from: options.from };
    return new Promise<void>((resolve) => {
      const giveUp = (tried: number, error: unknown) => {
        this.report.count('failed');
        this.report.onError(new MailDeliveryError(message.subject, tried, error), { requestId });
        resolve();
      };
      const later = (tried: number, ms: number) => {
        const waiting = { timer: setTimeout(() => (this.#waiting.delete(waiting), attempt(tried)), ms), cancel: () => giveUp(tried - 1, new Error('the service closed before the next try')) };
        this.#waiting.add(waiting);
      };
      const attempt = (tried: number) => {
        options.mailer.send(mail).then(
          () => (this.report.count('sent'), resolve()),
          (error: unknown) => {
            if (tried <= this.#retries && !this.#closed) {
              this.report.count('retried');
              later(tried + 1, this.#delayMs * 2 ** (tried - 1));
              return;
            }
            giveUp(tried, error);
          },
        );
      };
      if (this.#closed) giveUp(0, new Error('the service is closed'));
      else later(1, 0);
    });
  }

  /** Gives up the tries still waiting (reported and counted as failed); a try under way ends as it ends, without another. */
  close(): void {
    this.#closed = true;
    for (const waiting of this.#waiting) {
      clearTimeout(waiting.timer);
      waiting.cancel();
    }
    this.#waiting.clear();
  }

  /** `ctx.mail` of a macro whose store is `store`: file attachments are read through it (its read rules). */
  forMacros(store: ObjectStore): MacroMail {
    return { send: (message) => this.#sendNow(message, store) };
  }

  async #sendNow(given: MacroMailMessage, store: ObjectStore): Promise<void> {
    if (!this.options) throw new Error('ctx.mail.send: mail is not configured (the mail option, or mail: in api-config.yml)');
    let message: v.InferOutput<typeof MacroMailSchema>;
    try {
      message = parseInput(MacroMailSchema, given, 'the mail');
    } catch (error) {
      // the macro's own mistake, not the client's: a 500, logged
      throw new TypeError(`ctx.mail.send: ${(error as Error).message}`);
    }
    const attachments = await this.#attachments(message.attachments, store);
    try {
      await this.options.mailer.send({ from: this.options.from, to: message.to, subject: message.subject, text: message.text, html: message.html, attachments });
    } catch (error) {
      this.report.count('failed');
      throw new MailDeliveryError(message.subject, 1, error);
    }
    this.report.count('sent');
  }

  /** The attachments' bytes: a file's only after its size, with those before it, fits `MAX_ATTACHMENT_BYTES`. */
  async #attachments(given: ReadonlyArray<MailAttachment | FileAttachment>, store: ObjectStore): Promise<MailAttachment[]> {
    const found: MailAttachment[] = [];
    let bytes = 0;
    const count = (size: number) => {
      bytes += size;
      if (bytes > MAX_ATTACHMENT_BYTES) throw new ApiError('413', `the attachments of a mail may hold at most ${MAX_ATTACHMENT_BYTES} bytes`);
    };
    for (const attachment of given) {
      if (!('fileId' in attachment)) {
        count(attachment.content.byteLength);
        found.push(attachment);
        continue;
      }
      const id = attachment.fileId;
      const file = await store.get(id);
      const missing = () => new ApiError('404', `no file ${JSON.stringify(id.slice(0, 100))} to attach`);
      if (!file || file.className !== this.files.className) throw missing();
      const stat = await this.files.blobs.stat(id);
      if (!stat) throw missing();
      count(stat.size);
      const read = await this.files.blobs.get(id);
      if (!read) throw missing();
      const content = new Uint8Array(await new Response(read.stream).arrayBuffer());
      found.push({ filename: attachment.filename ?? nameOf(file), content, contentType: contentTypeOf(file) });
    }
    return found;
  }
}
