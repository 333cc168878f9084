import { Header } from './components/Header.js';
import { Account, Events, Metrics, Model, Objects, RecycleBin } from './features/index.js';
import { NoticeBar } from './features/notice.js';
import { PanelStack } from './panels/PanelStack.js';
import { route } from './router.js';
import { Classes } from './screens/Classes.js';
import { Login } from './screens/Login.js';
import { session } from './session.js';
import { t } from './i18n/index.js';

/** The page: the login until there is a session, then the header, the screen of the route and its panels. */
export function App() {
  const current = session.value;
  if (!current) {
    return (
      <>
        <Header />
        <main id="content">
          <Login />
        </main>
      </>
    );
  }
  const { screen, className, stack } = route.value;
  return (
    <>
      <a class="skip" href="#content" onClick={(event) => (event.preventDefault(), document.getElementById('content')?.focus())}>
        {t('skipToContent')}
      </a>
      <Header />
      <main id="content" tabIndex={-1}>
        {screen === 'objects' && className ? (
          <Objects key={className} client={current.client} className={className} />
        ) : screen === 'recycle' ? (
          <RecycleBin client={current.client} />
        ) : screen === 'account' ? (
          <Account client={current.client} />
        ) : screen === 'model' ? (
          <Model client={current.client} />
        ) : screen === 'events' ? (
          <Events client={current.client} />
        ) : screen === 'metrics' ? (
          <Metrics client={current.client} />
        ) : (
          <Classes client={current.client} />
        )}
      </main>
      {stack.length > 0 && <PanelStack client={current.client} stack={stack} />}
      <NoticeBar />
    </>
  );
}
