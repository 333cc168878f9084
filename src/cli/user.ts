import { parseArgs } from 'node:util';
import { UserAccounts, type UserChange } from '../accounts/users.js';
import { UserSessions } from '../accounts/user-sessions.js';
import { SeatCounter } from '../auth/seats.js';
import { SessionStore, sessionLimits } from '../auth/sessions.js';
import { ApiError } from '../http/errors.js';
import type { ObjectStore } from '../storage/types.js';
import { MemoryKeyValueStore } from '../storage/memory-kv.js';
import { loadConfig } from '../../adapters/node.js';
import { openKeyValueStore, openObjectStore } from '../../adapters/config-modules.js';
import { UsageError } from './serve.js';

export const USER_USAGE = `usage: odbrest user add NAME [--password P] [--groups a,b] [--licences crm,shop] [--description D]
       odbrest user disable NAME [--enable]
       odbrest user groups NAME a,b          (the user's groups, replacing the old ones; "" for none)
       odbrest user password NAME [--password P]
       odbrest user list [--json]            (every user: name, groups, licences, disabled)
       odbrest user delete NAME              (the user object, after ending its sessions)
  Against the stores api-config.yml (or --config FILE, ODBREST_CONFIG, ODBREST_STORE, ODBREST_KV) names.
  Without --password the password is read from ODBREST_USER_PASSWORD, else the first line of standard input.
  A new password or a disabled user ends the user's sessions in the configured key-value store.`;

interface UserFlags {
  command: 'add' | 'disable' | 'groups' | 'password' | 'list' | 'delete';
  name: string;
  groups?: string[];
  password?: string;
  licences?: string[];
  description?: string;
  enable: boolean;
  json: boolean;
  config?: string;
}

const list = (text: string) => text.split(',').map((item) => item.trim()).filter(Boolean);

/** Parses `odbrest user ...`; a mistake is a `UsageError`. */
export function parseUserArgs(args: string[]): UserFlags {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        password: { type: 'string' },
        groups: { type: 'string' },
        licences: { type: 'string' },
        description: { type: 'string' },
        enable: { type: 'boolean' },
        json: { type: 'boolean' },
        config: { type: 'string' },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]!, USER_USAGE);
  }
  const { values, positionals } = parsed;
  const [command, name, third, ...rest] = positionals;
  if (!['add', 'disable', 'groups', 'password', 'list', 'delete'].includes(command ?? '')) throw new UsageError(`unknown user command ${command ?? '(none)'}`, USER_USAGE);
  if (command === 'list' && name !== undefined) throw new UsageError(`unexpected argument ${name}`, USER_USAGE);
  if (!name && command !== 'list') throw new UsageError(`user ${command} needs a user name`, USER_USAGE);
  if (command === 'groups' && third === undefined) throw new UsageError('user groups needs the group names: odbrest user groups NAME a,b', USER_USAGE);
  if ((command !== 'groups' && third !== undefined) || rest.length > 0) throw new UsageError(`unexpected argument ${third ?? rest[0]}`, USER_USAGE);
  return {
    command: command as UserFlags['command'],
    name: name ?? '',
    groups: command === 'groups' ? list(third!) : values.groups === undefined ? undefined : list(values.groups),
    password: values.password,
    licences: values.licences === undefined ? undefined : list(values.licences),
    description: values.description,
    enable: values.enable ?? false,
    json: values.json ?? false,
    config: values.config,
  };
}

/** Every user, a page at a time: a table, or with `json` one JSON array. */
async function listUsers(store: ObjectStore, users: UserAccounts, json: boolean): Promise<string> {
  const rows: Array<{ name: string; id: string; groups: string[]; licences: string[]; disabled: boolean }> = [];
  for (let offset = 0; ; offset += 1000) {
    const { objects } = await store.find({ className: users.userClass, offset, limit: 1000 });
    for (const user of objects) {
      const licences = Array.isArray(user.fields._licences) ? user.fields._licences.map(String) : [];
      rows.push({ name: String(user.fields.Name ?? ''), id: user.id, groups: [...(await users.groupNames(user))].sort(), licences, disabled: user.fields._disabled === true });
    }
    if (objects.length < 1000) break;
  }
  rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (json) return JSON.stringify(rows);
  const table = [['NAME', 'ID', 'GROUPS', 'LICENCES', 'DISABLED'], ...rows.map((row) => [row.name, row.id, row.groups.join(',') || '-', row.licences.join(',') || '-', row.disabled ? 'yes' : 'no'])];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
  return [...table.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()), `${rows.length === 1 ? '1 user' : `${rows.length} users`}`].join('\n');
}

async function readPassword(env: Record<string, string | undefined>, stdin: () => Promise<string>): Promise<string> {
  const given = env.ODBREST_USER_PASSWORD || (await stdin()).split(/\r?\n/)[0];
  if (!given) throw new UsageError('no password: give --password, ODBREST_USER_PASSWORD, or a line on standard input', USER_USAGE);
  return given;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

/**
 * `odbrest user add|disable|groups|password` against the configured stores: the object store for the
 * user, the key-value store for its sessions, which a new password or a disabled user ends. Answers
 * the line it reports.
 */
export async function runUserCommand(flags: UserFlags, env: Record<string, string | undefined> = process.env, stdin = readStdin): Promise<string> {
  const config = loadConfig(flags.config === undefined ? env : { ...env, ODBREST_CONFIG: flags.config });
  const store = await openObjectStore(config.file.store, config.baseDir);
  if (!store) throw new Error('the configured store is memory: nothing would last; name the store the server uses (store: in api-config.yml or ODBREST_STORE)');
  const kv = await openKeyValueStore(config.file.kv, config.baseDir).catch(async (error: unknown) => {
    await store.close?.();
    throw error;
  });
  const notes: string[] = [];
  if (!kv) notes.push('(the key-value store is memory: sessions of running servers are not reached; set kv: to the server\'s Redis)');
  const sessionKv = kv ?? new MemoryKeyValueStore();
  try {
    const sessions = new UserSessions(new SessionStore(sessionKv, sessionLimits(config.options.session), Date.now, 100), new SeatCounter(sessionKv));
    const users = new UserAccounts(store, sessions, config.options.users);
    const password = flags.command === 'add' || flags.command === 'password' ? (flags.password ?? (await readPassword(env, stdin))) : undefined;
    let line: string;
    if (flags.command === 'list') {
      line = await listUsers(store, users, flags.json);
    } else if (flags.command === 'delete') {
      const user = await users.find(flags.name);
      if (!user) throw new ApiError('404', `no user named ${JSON.stringify(flags.name)}`);
      const ended = await sessions.endAll(user.id);
      await store.delete(user.id);
      line = `deleted user ${flags.name} (${user.id}); ${ended === 1 ? '1 session' : `${ended} sessions`} ended`;
    } else if (flags.command === 'add') {
      const user = await users.create({ Name: flags.name, pass: password!, Groups: flags.groups, Licences: flags.licences, Description: flags.description });
      line = `created user ${flags.name} (${user.id})`;
    } else {
      const change: UserChange =
        flags.command === 'disable' ? { Disabled: !flags.enable } : flags.command === 'groups' ? { Groups: flags.groups } : { pass: password };
      await users.update(flags.name, change);
      line =
        flags.command === 'disable'
          ? `${flags.enable ? 'enabled' : 'disabled'} user ${flags.name}${flags.enable ? '' : '; its sessions ended'}`
          : flags.command === 'groups'
            ? `user ${flags.name} is in ${flags.groups!.length === 0 ? 'no group' : `the groups ${flags.groups!.join(', ')}`}`
            : `set the password of user ${flags.name}; its sessions ended`;
    }
    return flags.command === 'list' ? line : [line, ...notes].join('\n');
  } catch (error) {
    // the service's refusals (409, 404, 400) are the operator's mistakes: their message is the line
    if (error instanceof ApiError) throw new Error(error.message);
    throw error;
  } finally {
    await store.close?.();
    await kv?.close?.();
  }
}
