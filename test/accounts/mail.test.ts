/**
 * Mail (issue 51, part 2; PROTOCOL.md 2.8 and 7) against a real SMTP server the test starts: the
 * password reset mailed to the user's `Email` in its `Language`, a mail server that is down, and a
 * macro mailing a file object, each through HTTP against a served service.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createService, clientPassValue, MailDeliveryError, MemoryBlobStore, type ErrorContext, type ServiceOptions } from '../../src/index.js';
import { serve, smtpMailer } from '../../adapters/node.js';
import { freePort } from '../support/processes.js';
import { startSmtp, type TestSmtp } from '../support/smtp.js';
import { demoData, USERS } from '../helpers.js';

const RESET_LINK = 'https://app.example.com/reset?token={token}&from=<mail>';
const REPORT = new TextEncoder().encode('quarterly figures\n');

/** Users with an address: erin (no language: English) and a German user whose name needs escaping in HTML. */
const mailUsers = [
  { '~ClassName': 'User', '~ObjectID': 'USRMAIL1', Name: 'erin', Email: 'erin@example.com', _password: 'erin-first-secret', _licences: ['crm'], Groups: { $set: [] } },
  { '~ClassName': 'User', '~ObjectID': 'USRMAIL2', Name: 'jürgen<b>', Email: 'juergen@example.de', Language: 'de-DE', _password: 'juergen-first-secret', _licences: ['crm'], Groups: { $set: [] } },
  { '~ClassName': 'User', '~ObjectID': 'USRMAIL3', Name: 'nomail', _password: 'nomail-first-secret', _licences: ['crm'], Groups: { $set: [] } },
  { '~ClassName': 'Document', '~ObjectID': 'DOCMAIL1', Name: 'report.txt', ContentType: 'text/plain', Size: REPORT.length },
];

interface Served {
  base: string;
  errors: Array<{ error: unknown; about?: ErrorContext }>;
  close(): Promise<void>;
}

async function served(options: ServiceOptions): Promise<Served> {
  const data = demoData();
  const blobs = new MemoryBlobStore();
  await blobs.put('DOCMAIL1', new Blob([REPORT]).stream());
  const errors: Served['errors'] = [];
  const service = createService({
    data: { ...data, objects: [...data.objects, ...mailUsers] },
    users: { passwordIterations: 1000, admins: 'admins' },
    files: { blobs },
    // only admins (alice) read files: bob's macro cannot attach one
    access: { rules: { Document: { read: ['admins'] } } },
    onError: (error, about) => void errors.push({ error, about }),
    ...options,
  });
  await service.ready;
  const server: Server = await serve(service, { port: 0, hostname: '127.0.0.1' });
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    errors,
    close: () => new Promise<void>((resolve) => server.close(() => void service.close().then(resolve))),
  };
}

async function post(base: string, path: string, json: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(base + path, { method: 'POST', headers: { appkey: 'test', 'content-type': 'application/json', ...headers }, body: JSON.stringify(json) });
  return { status: response.status, requestId: response.headers.get('x-request-id'), body: (await response.json()) as any };
}

async function login(base: string, user: string, password: string): Promise<string> {
  const { body } = await post(base, '/v1/login', { user, pass: clientPassValue(password), appNames: ['crm'] });
  if (body.status.internalStatus !== '0') throw new Error(`login of ${user}: ${JSON.stringify(body.status)}`);
  return body.data.sessionId;
}

const tokenOf = (text: string) => new URL(/https:\/\/app\.example\.com\/reset\?\S+/.exec(text)![0]).searchParams.get('token')!;

describe('mail to a real SMTP server', () => {
  let smtp: TestSmtp;
  let service: Served;
  beforeAll(async () => {
    smtp = await startSmtp();
    service = await served({
      mail: { mailer: await smtpMailer(smtp.url), from: '"odbrest test" <noreply@example.com>', resetLink: RESET_LINK },
      macros: {
        mailReport: (ctx, { to, fileId }) => ctx.mail.send({ to: String(to), subject: 'Your report', text: 'attached', attachments: [{ fileId: String(fileId) }] }).then(() => ({ sent: true })),
      },
    });
  });
  afterAll(async () => {
    await service?.close();
    await smtp?.close();
  });

  test('a reset mails the link to the user, whose token completes the reset through HTTP', async () => {
    const asked = await post(service.base, '/v1/user/password/reset', { user: 'erin' });
    const unknown = await post(service.base, '/v1/user/password/reset', { user: 'nobody-here' });
    expect(asked.body).toEqual({ status: { internalStatus: '0', statusMessage: 'if this user exists and can be reached, a reset token is on its way' }, data: {} });
    expect(unknown.body).toEqual(asked.body);
    const mail = await smtp.mail(1);
    expect(mail.to).toMatchObject({ text: 'erin@example.com' });
    expect(mail.from?.text).toBe('"odbrest test" <noreply@example.com>');
    expect(mail.subject).toBe('Reset your password');
    expect(mail.text).toContain('Hello erin,');
    const token = tokenOf(mail.text!);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // the HTML holds the same link, escaped (its & and <mail>)
    expect(mail.html).toContain(`href="https://app.example.com/reset?token=${token}&amp;from=&lt;mail&gt;"`);
    const confirmed = await post(service.base, '/v1/user/password/reset/confirm', { token, newPass: 'erin-second-secret' });
    expect(confirmed.body.status.internalStatus).toBe('0');
    await login(service.base, 'erin', 'erin-second-secret');
    // the unknown name mailed nothing
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(smtp.mails.map((m) => m.subject)).toEqual(['Reset your password']);
  });

  test('a user whose Language is German gets the mail in German, every value escaped in its HTML', async () => {
    const before = smtp.mails.length;
    await post(service.base, '/v1/user/password/reset', { user: 'jürgen<b>' });
    const mail = await smtp.mail(before + 1);
    expect(mail.subject).toBe('Passwort zurücksetzen');
    expect(mail.text).toContain('Hallo jürgen<b>,');
    expect(mail.text).toContain('innerhalb von 15 Minuten');
    expect(mail.html).toContain('<html lang="de">');
    expect(mail.html).toContain('Hallo jürgen&lt;b&gt;,');
    expect(mail.html).not.toContain('<b>');
    const confirmed = await post(service.base, '/v1/user/password/reset/confirm', { token: tokenOf(mail.text!), newPass: 'juergen-second-secret' });
    expect(confirmed.body.status.internalStatus).toBe('0');
  });

  test('a user without Email gets no mail and the same answer', async () => {
    const before = smtp.mails.length;
    const asked = await post(service.base, '/v1/user/password/reset', { user: 'nomail' });
    expect(asked.body.status.internalStatus).toBe('0');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(smtp.mails.length).toBe(before);
  });

  test('a macro mails a file object, read through the file class read rule of its session', async () => {
    const alice = await login(service.base, 'alice', USERS.alice);
    const before = smtp.mails.length;
    const sent = await post(service.base, '/v1/execute/mailReport', { to: 'boss@example.com', fileId: 'DOCMAIL1' }, { sessionId: alice });
    expect(sent.body).toEqual({ status: { internalStatus: '0', statusMessage: 'ok' }, data: { sent: true } });
    const mail = await smtp.mail(before + 1);
    expect(mail.subject).toBe('Your report');
    expect(mail.attachments.map((a) => [a.filename, a.contentType, Buffer.from(a.content).toString()])).toEqual([['report.txt', 'text/plain', 'quarterly figures\n']]);
    // bob may not read files: for his session the file is not there, and nothing is sent
    const bob = await login(service.base, 'bob', USERS.bob);
    const refused = await post(service.base, '/v1/execute/mailReport', { to: 'boss@example.com', fileId: 'DOCMAIL1' }, { sessionId: bob });
    expect(refused.status).toBe(404);
    expect(refused.body.status).toEqual({ internalStatus: '404', statusMessage: 'no file "DOCMAIL1" to attach' });
    const missing = await post(service.base, '/v1/execute/mailReport', { to: 'boss@example.com', fileId: 'NOSUCHID' }, { sessionId: alice });
    expect(missing.status).toBe(404);
    expect(smtp.mails.length).toBe(before + 1);
  });
});

describe('a mail server that is down', () => {
  test('the reset still answers "0"; the failure is retried, then logged with the request id', async () => {
    const port = await freePort(); // nothing listens there
    const service = await served({ mail: { mailer: await smtpMailer(`smtp://127.0.0.1:${port}`), from: 'noreply@example.com', resetLink: RESET_LINK, retries: 2, retryDelayMs: 10 } });
    try {
      const asked = await post(service.base, '/v1/user/password/reset', { user: 'erin' });
      const unknown = await post(service.base, '/v1/user/password/reset', { user: 'nobody-here' });
      expect(asked.status).toBe(200);
      expect(asked.body).toEqual(unknown.body);
      expect(asked.body.status.internalStatus).toBe('0');
      for (let i = 0; i < 200 && service.errors.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(service.errors).toHaveLength(1);
      const [{ error, about }] = service.errors as [Served['errors'][number]];
      expect(error).toBeInstanceOf(MailDeliveryError);
      expect((error as Error).message).toMatch(/^mail "Reset your password" was not delivered after 3 attempts: .*ECONNREFUSED/);
      expect((error as Error).message).not.toMatch(/token|reset\?/);
      expect(about).toEqual({ requestId: asked.requestId });
    } finally {
      await service.close();
    }
  });

  test('closing the service gives up a retry that waits: nothing is sent after close, and the mail is reported', async () => {
    let tries = 0;
    const mailer = {
      send: async () => {
        tries++;
        throw new Error('421 try later');
      },
    };
    const service = await served({ mail: { mailer, from: 'noreply@example.com', resetLink: RESET_LINK, retries: 2, retryDelayMs: 200 } });
    const asked = await post(service.base, '/v1/user/password/reset', { user: 'erin' });
    await expect.poll(() => tries).toBe(1);
    await service.close();
    await new Promise((resolve) => setTimeout(resolve, 600)); // past both retries' times
    expect(tries).toBe(1);
    expect(service.errors.map(({ error, about }) => [(error as Error).message, about])).toEqual([
      ['mail "Reset your password" was not delivered after 1 attempt: the service closed before the next try', { requestId: asked.requestId }],
    ]);
  });
});

