import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { OdbRestError, type OdbRestClient, type SessionEntry, type UserEntry } from 'odbrest/client';
import { Alert } from '../components/Alert.js';
import { Said, type Outcome } from '../components/Said.js';
import { failureText } from '../data.js';
import { t } from '../i18n/index.js';


/** Runs a call of the client and says how it went; answers whether it succeeded. */
async function attempt(outcome: { value: Outcome }, call: () => Promise<unknown>, done: string): Promise<boolean> {
  try {
    await call();
    outcome.value = { ok: true, text: done };
    return true;
  } catch (error) {
    outcome.value = { ok: false, text: failureText(error) };
    return false;
  }
}

/** Live sessions (of the caller, or of `user` for administrators), each to end (PROTOCOL.md 2.8). */
function Sessions({ client, user }: { client: OdbRestClient; user?: string }) {
  const list = useSignal<SessionEntry[] | undefined>(undefined);
  const outcome = useSignal<Outcome>(undefined);
  const load = () => client.accounts.sessions(user).then((sessions) => (list.value = sessions), (error) => (outcome.value = { ok: false, text: failureText(error) }));
  useEffect(() => void load(), [client, user]);
  const end = (handle: string) => void attempt(outcome, () => client.accounts.endSession(handle), t('otherSessionEnded')).then(load);
  const endAll = () => void attempt(outcome, () => client.accounts.endOtherSessions(user), t('sessionsEnded')).then(load);
  const sessions = list.value ?? [];
  return (
    <div class="sessions">
      <Said outcome={outcome.value} />
      {list.value && sessions.length === 0 && <p>{t('noSessions')}</p>}
      {sessions.length > 0 && (
        <table class="grid">
          <thead>
            <tr>
              <th scope="col">{t('sessionKind')}</th>
              <th scope="col">{t('sessionCreated')}</th>
              <th scope="col">{t('sessionLastUsed')}</th>
              <th scope="col">{t('sessionAddress')}</th>
              <th scope="col">{t('sessionApps')}</th>
              <th scope="col">
                <span class="visually-hidden">{t('endSession')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((entry) => (
              <tr key={entry['~ObjectID']} data-session={entry['~ObjectID']} data-current={String(entry.Current)}>
                <td>{entry.Kind}</td>
                <td>{entry.Created}</td>
                <td>{entry.LastUsed}</td>
                <td>{entry.Address ?? ''}</td>
                <td>{entry.Apps.join(', ')}</td>
                <td>
                  {entry.Current ? (
                    t('thisSession')
                  ) : user === undefined ? (
                    <button type="button" onClick={() => end(entry['~ObjectID'])}>
                      {t('endSession')}
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {sessions.some((entry) => !entry.Current) && (
        <button type="button" onClick={endAll}>
          {t(user === undefined ? 'endOtherSessions' : 'endUserSessions', { user: user ?? '' })}
        </button>
      )}
    </div>
  );
}

function PasswordChange({ client }: { client: OdbRestClient }) {
  const outcome = useSignal<Outcome>(undefined);
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    void attempt(outcome, () => client.accounts.changePassword({ password: String(data.get('current')) }, { password: String(data.get('next')) }), t('passwordChanged')).then(
      (ok) => ok && form.reset(),
    );
  };
  return (
    <form class="account-form" onSubmit={submit} aria-labelledby="password-title">
      <h2 id="password-title">{t('changePassword')}</h2>
      <label>
        {t('currentPassword')}
        <input name="current" type="password" autocomplete="current-password" required />
      </label>
      <label>
        {t('newPassword')}
        <input name="next" type="password" autocomplete="new-password" required />
      </label>
      <button type="submit">{t('changePassword')}</button>
      <Said outcome={outcome.value} />
    </form>
  );
}

const groupsOf = (text: string) => text.split(',').map((group) => group.trim()).filter(Boolean);

/** One user's row: the state, and the administrator's changes (disable, groups, a new password, its sessions). */
function UserRow({ client, user, reload }: { client: OdbRestClient; user: UserEntry; reload: () => void }) {
  // a user object the host wrote without a Name lists as null (GET /v1/users); it cannot be named in a change
  const name = user.Name ?? '';
  const outcome = useSignal<Outcome>(undefined);
  const open = useSignal(false);
  const change = (run: () => Promise<unknown>, done: string) => void attempt(outcome, run, done).then((ok) => ok && reload());
  const submit = (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const pass = String(data.get('pass') ?? '');
    change(() => client.accounts.updateUser(name, { Groups: groupsOf(String(data.get('groups') ?? '')), ...(pass ? { password: pass } : {}) }), t('userChanged', { user: name }));
  };
  return (
    <>
      <tr data-user={name}>
        <th scope="row">{name}</th>
        <td>{user.Groups.join(', ')}</td>
        <td>{t(user.Disabled ? 'yes' : 'no')}</td>
        <td>{t(user.TwoFactor ? 'yes' : 'no')}</td>
        <td>{user.Passkeys}</td>
        <td>
          <button type="button" onClick={() => change(() => client.accounts.updateUser(name, { Disabled: !user.Disabled }), t('userChanged', { user: name }))}>
            {t(user.Disabled ? 'enableUser' : 'disableUser', { user: name })}
          </button>{' '}
          <button type="button" aria-expanded={open.value} onClick={() => (open.value = !open.value)}>
            {t('manageUser', { user: name })}
          </button>
        </td>
      </tr>
      {(open.value || outcome.value) && (
        <tr class="user-detail" data-user-detail={name}>
          <td colSpan={6}>
            <Said outcome={outcome.value} />
            {open.value && (
              <>
                <form class="account-form" onSubmit={submit} aria-label={t('manageUser', { user: name })}>
                  <label>
                    {t('groups')}
                    <input name="groups" defaultValue={user.Groups.join(', ')} />
                  </label>
                  <label>
                    {t('setPassword')}
                    <input name="pass" type="password" autocomplete="new-password" />
                  </label>
                  <button type="submit">{t('save')}</button>
                </form>
                <h3>{t('sessionsOf', { user: name })}</h3>
                <Sessions client={client} user={name} />
              </>
            )}
          </td>
        </tr>
      )}
    </>
  );
}

/** Administrators: the users (`GET /v1/users`), a new user, and each user's changes. */
function Users({ client, users, reload }: { client: OdbRestClient; users: UserEntry[]; reload: () => void }) {
  const outcome = useSignal<Outcome>(undefined);
  const add = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const name = String(data.get('name'));
    void attempt(outcome, () => client.accounts.createUser({ Name: name, password: String(data.get('pass')), Groups: groupsOf(String(data.get('groups') ?? '')) }), t('userCreated', { user: name })).then(
      (ok) => ok && (form.reset(), reload()),
    );
  };
  return (
    <section aria-labelledby="users-title">
      <h2 id="users-title">{t('users')}</h2>
      <table class="grid users">
        <thead>
          <tr>
            <th scope="col">{t('userName')}</th>
            <th scope="col">{t('groups')}</th>
            <th scope="col">{t('disabled')}</th>
            <th scope="col">{t('twoFactor')}</th>
            <th scope="col">{t('passkeys')}</th>
            <th scope="col">
              <span class="visually-hidden">{t('adminActions')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {users.map((user) => (
            <UserRow key={user.Name} client={client} user={user} reload={reload} />
          ))}
        </tbody>
      </table>
      <form class="account-form" onSubmit={add} aria-labelledby="add-user-title">
        <h3 id="add-user-title">{t('addUser')}</h3>
        <label>
          {t('userName')}
          <input name="name" required autocomplete="off" />
        </label>
        <label>
          {t('password')}
          <input name="pass" type="password" autocomplete="new-password" required />
        </label>
        <label>
          {t('groups')}
          <input name="groups" />
        </label>
        <button type="submit">{t('addUser')}</button>
        <Said outcome={outcome.value} />
      </form>
    </section>
  );
}

/** The account screen (PROTOCOL.md 2.8): own sessions and password for everyone; user administration for `users.admins`. */
export function Account({ client }: { client: OdbRestClient }) {
  // the list answers 403 to anyone outside users.admins: then the administration stays hidden; any other failure is said
  const users = useSignal<UserEntry[] | undefined>(undefined);
  const error = useSignal('');
  const load = () =>
    client.accounts.users({ perPage: 1000 }).then(
      (set) => ((users.value = set['~Elements']), (error.value = '')),
      (cause) => ((users.value = undefined), (error.value = cause instanceof OdbRestError && cause.internalStatus === '403' ? '' : failureText(cause))),
    );
  useEffect(() => void load(), [client]);
  return (
    <section class="screen" aria-labelledby="account-title">
      <h1 id="account-title">{t('account')}</h1>
      <h2>{t('yourSessions')}</h2>
      <Sessions client={client} />
      <PasswordChange client={client} />
      <Alert text={error.value} />
      {users.value && <Users client={client} users={users.value} reload={() => void load()} />}
    </section>
  );
}
