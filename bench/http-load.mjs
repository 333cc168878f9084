// Pieces of the benches that load a server in its own process with wrk (secure-http, core's GET over
// HTTP): wrk is a native load generator, so the client's cost is not measured with the server's; a
// load generator written in JavaScript would measure itself on this 2-core machine.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const CONNECTIONS = 16;

export function hasWrk() {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    return error.code !== 'ENOENT'; // wrk --version exits with 1
  }
}

/** Starts `node script ...args` with `env` on a free port; resolves with its process and address once it prints `listening on http://host:port`. */
export const startServer = (script, env = {}, args = []) => startCommand(process.execPath, [script, ...args], env);

/** Starts `command ...args` (a server printing `listening on http://host:port`) with `env` on a free port. */
export async function startCommand(command, args, env = {}) {
  const script = [command, ...args].join(' ');
  const server = spawn(command, args, {
    env: { ...process.env, PORT: '0', ODBREST_HOSTNAME: '127.0.0.1', ODBREST_REQUEST_LOG: 'false', ...env }, // a line per request would be measured too
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let seen = '';
  for await (const chunk of server.stdout) {
    seen += chunk;
    const port = /listening on http:\/\/[^:]+:(\d+)/.exec(seen)?.[1];
    if (port) {
      server.stdout.resume();
      return { server, base: `http://127.0.0.1:${port}` };
    }
  }
  throw new Error(`${script} did not start: ${seen}`);
}

/** Starts `npm start`'s server (the demo, memory store) on a free port. */
export const startDemo = () => startServer(new URL('../examples/node/server.mjs', import.meta.url).pathname);

/** CPU time (user + system) of a process so far, in µs; `undefined` where /proc is missing. */
export function cpuMicros(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // clock ticks of 1/100 s
  } catch {
    return undefined;
  }
}

/** Runs wrk once for `seconds`; answered (2xx) requests per second and server CPU µs per answered request. */
export function load(pid, url, args, seconds) {
  const cpuBefore = cpuMicros(pid);
  const out = execFileSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', ...args, url], { encoding: 'utf8' });
  const cpuAfter = cpuMicros(pid);
  const [, total, elapsed] = /(\d+) requests in ([\d.]+)s/.exec(out);
  const refused = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const answered = Number(total) - refused;
  if (refused > answered / 100) throw new Error(`wrk: ${refused} of ${total} requests refused\n${out}`);
  return { rate: answered / Number(elapsed), cpuPerRequest: cpuBefore === undefined ? undefined : (cpuAfter - cpuBefore) / answered };
}
