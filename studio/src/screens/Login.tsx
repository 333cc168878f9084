import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { OdbRestError, TwoFactorError } from 'odbrest/client';
import { config } from '../config.js';
import { t } from '../i18n/index.js';
import { loginNotice, newClient, startSession } from '../session.js';
import { Alert } from '../components/Alert.js';

/** Asked once per page: the login form shows before the answer, and a login sent sooner waits for it. */
let secureCheck: Promise<boolean> | undefined;
// the secure login is the default where it can be made, so the session is encrypted end to end
const secureAvailable = () => (secureCheck ??= newClient().secureLoginAvailable());

/** Password (the client sends its MD5 form, computed here), second factor when asked, passkey; secure by default. */
export function Login() {
  const user = useSignal('');
  const password = useSignal('');
  const apps = useSignal(config.appNames.join(', '));
  const code = useSignal('');
  const needCode = useSignal(false);
  /** The person's choice; `undefined` until they make one: secure when the service offers it. */
  const secure = useSignal<boolean | undefined>(undefined);
  const canSecure = useSignal(false);
  const remember = useSignal(false);
  const busy = useSignal(false);
  const error = useSignal('');

  useEffect(() => {
    void secureAvailable().then((available) => (canSecure.value = available));
  }, []);

  const appNames = () => apps.value.split(',').map((name) => name.trim()).filter(Boolean);

  const failed = (cause: unknown) => {
    if (cause instanceof TwoFactorError && cause.need !== 'enrolment') {
      needCode.value = true;
      error.value = cause.need === 'code' ? t('twoFactorAsked') : cause.message;
    } else if (cause instanceof TwoFactorError) {
      error.value = t('twoFactorEnrolment');
    } else {
      error.value = cause instanceof OdbRestError || cause instanceof Error ? cause.message : String(cause);
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    busy.value = true;
    error.value = '';
    const client = newClient();
    const credentials = { user: user.value, password: password.value, appNames: appNames(), ...(needCode.value ? { twoFactorToken: code.value.trim() } : {}) };
    try {
      const useSecure = secure.value ?? (await secureAvailable());
      if (useSecure) await client.loginSecure(credentials);
      else await client.login(credentials);
      startSession(client, user.value, remember.value && !useSecure);
    } catch (cause) {
      failed(cause);
    } finally {
      busy.value = false;
    }
  };

  const passkey = async () => {
    busy.value = true;
    error.value = '';
    const client = newClient();
    try {
      const { startAuthentication } = await import('@simplewebauthn/browser');
      const optionsJSON = await client.accounts.passkeyLoginOptions(user.value || undefined);
      const response = await startAuthentication({ optionsJSON: optionsJSON as never });
      const login = await client.accounts.loginWithPasskey(response, appNames());
      startSession(client, String(login.user.Name ?? user.value), remember.value);
    } catch (cause) {
      failed(cause);
    } finally {
      busy.value = false;
    }
  };

  return (
    <form class="login card" onSubmit={submit} aria-labelledby="login-title">
      <h1 id="login-title">{t('loginTitle')}</h1>
      {loginNotice.value === 'sessionEnded' && (
        <p class="notice" role="status">
          {t('sessionEnded')}
        </p>
      )}
      <label>
        <span>{t('user')}</span>
        <input name="user" autocomplete="username webauthn" required value={user.value} onInput={(e) => (user.value = e.currentTarget.value)} />
      </label>
      <label>
        <span>{t('password')}</span>
        <input name="password" type="password" autocomplete="current-password" value={password.value} onInput={(e) => (password.value = e.currentTarget.value)} />
      </label>
      <label>
        <span>{t('application')}</span>
        <input name="application" title={t('applicationHint')} value={apps.value} onInput={(e) => (apps.value = e.currentTarget.value)} />
      </label>
      {needCode.value && (
        <label>
          <span>{t('twoFactorCode')}</span>
          <input name="code" inputMode="numeric" autocomplete="one-time-code" required value={code.value} onInput={(e) => (code.value = e.currentTarget.value)} ref={(input) => input?.focus()} />
        </label>
      )}
      <label class="check">
        <input type="checkbox" name="secure" checked={secure.value ?? canSecure.value} disabled={!canSecure.value} onChange={(e) => (secure.value = e.currentTarget.checked)} />
        <span>{t('secureLogin')}</span>
      </label>
      {!canSecure.value && <p class="hint">{t('secureUnavailable')}</p>}
      <label class="check">
        <input type="checkbox" name="remember" checked={remember.value} disabled={secure.value ?? canSecure.value} onChange={(e) => (remember.value = e.currentTarget.checked)} />
        <span>{t('remember')}</span>
      </label>
      <Alert text={error.value} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy.value}>
          {busy.value ? t('loggingIn') : t('logIn')}
        </button>
        <button type="button" disabled={busy.value} onClick={() => void passkey()}>
          {t('passkeyLogin')}
        </button>
      </div>
    </form>
  );
}
