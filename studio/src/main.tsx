import { render } from 'preact';
import { App } from './App.js';
import { language, loadLanguage } from './i18n/index.js';
import { resumeSaved } from './session.js';
import { followTheme } from './theme.js';
import './styles.css';

document.documentElement.lang = language.value;
followTheme();
const root = document.getElementById('studio')!;
// the first screen is drawn in the person's language: its texts (German: a chunk) come with the saved session
void Promise.all([loadLanguage(language.value).catch(() => undefined), resumeSaved()]).finally(() => render(<App />, root));
