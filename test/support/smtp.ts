/** A real SMTP server for the tests (`smtp-server`), keeping every mail it accepts, parsed (`mailparser`). */
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface TestSmtp {
  /** `smtp://tester:secret@127.0.0.1:PORT`: the credentials the server accepts. */
  url: string;
  port: number;
  mails: ParsedMail[];
  /** The `count`-th mail (1-based) once it is there. */
  mail(count?: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

export async function startSmtp(): Promise<TestSmtp> {
  const mails: ParsedMail[] = [];
  const waiting: Array<() => void> = [];
  const server = new SMTPServer({
    // plain SMTP on loopback: no STARTTLS to offer, AUTH allowed without it
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth: (auth, _session, callback) =>
      auth.username === 'tester' && auth.password === 'secret' ? callback(null, { user: auth.username }) : callback(new Error('wrong credentials')),
    onData: (stream, _session, callback) => {
      simpleParser(stream).then(
        (parsed) => {
          mails.push(parsed);
          for (const wake of waiting.splice(0)) wake();
          callback();
        },
        (error: Error) => callback(error),
      );
    },
    logger: false,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://tester:secret@127.0.0.1:${port}`,
    port,
    mails,
    async mail(count = mails.length + 1) {
      const deadline = Date.now() + 10_000;
      while (mails.length < count) {
        if (Date.now() > deadline) throw new Error(`no mail number ${count} arrived (${mails.length} did)`);
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          setTimeout(resolve, 200);
        });
      }
      return mails[count - 1]!;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
