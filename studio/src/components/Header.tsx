import { useAdmin } from '../admin.js';
import { language, setLanguage, t, type Language } from '../i18n/index.js';
import { navigate } from '../router.js';
import { endSession, session } from '../session.js';
import { setTheme, theme, type Theme } from '../theme.js';
import { LiveStatus } from './LiveStatus.js';

/** The top bar: the name, the transport in use, the screens (Metrics for administrators), the user, theme and language switches, logout. */
export function Header() {
  const current = session.value;
  const admin = useAdmin(current?.client);
  return (
    <header class="bar">
      <a class="brand" href="#/classes" onClick={(event) => (event.preventDefault(), navigate({ screen: 'classes', stack: [] }))}>
        {t('appTitle')}
      </a>
      {current && (
        <span
          class={`transport transport-${current.transport}`}
          data-transport={current.transport}
          title={t(current.transport === 'secure' ? 'transportSecureHint' : 'transportPlainHint')}
        >
          {t(current.transport === 'secure' ? 'transportSecure' : 'transportPlain')}
        </span>
      )}
      {current && (
        <a href="#/recycle" class="nav">
          {t('recycleBin')}
        </a>
      )}
      {current && (
        <a href="#/model" class="nav">
          {t('model')}
        </a>
      )}
      {current && (
        <a href="#/events" class="nav">
          {t('events')}
        </a>
      )}
      {current && admin && (
        <a href="#/metrics" class="nav">
          {t('metrics')}
        </a>
      )}
      {current && (
        <a href="#/account" class="nav">
          {t('account')}
        </a>
      )}
      {current && <LiveStatus compact />}
      <span class="spacer" />
      {current && <span class="who">{t('loggedInAs', { user: current.user })}</span>}
      <label class="inline">
        <span>{t('theme')}</span>
        <select value={theme.value} onChange={(event) => setTheme(event.currentTarget.value as Theme)}>
          <option value="system">{t('themeSystem')}</option>
          <option value="light">{t('themeLight')}</option>
          <option value="dark">{t('themeDark')}</option>
        </select>
      </label>
      <label class="inline">
        <span>{t('language')}</span>
        <select value={language.value} onChange={(event) => void setLanguage(event.currentTarget.value as Language).catch(() => undefined)}>
          <option value="en">English</option>
          <option value="de">Deutsch</option>
        </select>
      </label>
      {current && (
        <button type="button" onClick={() => void endSession()}>
          {t('logOut')}
        </button>
      )}
    </header>
  );
}
