import type { Mailer } from '../src/index.js';

/** A `Mailer` that also closes its connections (`close()` once the service is closed). */
export interface SmtpMailer extends Mailer {
  close(): void;
}

/** The URL without its password, for messages. */
const shown = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');

/**
 * A `Mailer` over SMTP, through `nodemailer` (an optional peer: `npm install nodemailer`). `url`:
 * `smtp://user:pass@host:587` (upgraded with STARTTLS when the server offers it) or
 * `smtps://user:pass@host:465` (TLS from the start); user and password percent-encoded. Node only;
 * on another runtime give the `mail` option a `Mailer` of your own.
 */
export async function smtpMailer(url: string): Promise<SmtpMailer> {
  if (!URL.canParse(url) || !/^smtps?:$/.test(new URL(url).protocol)) throw new Error(`mail.url must be an smtp:// or smtps:// URL, not ${JSON.stringify(shown(url).slice(0, 60))}`);
  let nodemailer: typeof import('nodemailer');
  try {
    nodemailer = await import('nodemailer');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') throw new Error('mail needs the nodemailer package, an optional peer of odbrest: npm install nodemailer');
    throw error;
  }
  const transport = (nodemailer.default ?? nodemailer).createTransport(url);
  return {
    async send(message) {
      await transport.sendMail({
        from: message.from,
        to: typeof message.to === 'string' ? message.to : [...message.to],
        subject: message.subject,
        text: message.text,
        html: message.html,
        attachments: message.attachments?.map((attachment) => ({
          filename: attachment.filename,
          content: Buffer.from(attachment.content.buffer, attachment.content.byteOffset, attachment.content.byteLength),
          contentType: attachment.contentType,
        })),
      });
    },
    close: () => transport.close(),
  };
}
