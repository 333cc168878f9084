import { render } from 'preact';
import { App } from './App.js';
import { language } from './i18n/index.js';
import { resumeSaved } from './session.js';
import { followTheme } from './theme.js';
import './styles.css';

document.documentElement.lang = language.value;
followTheme();
const root = document.getElementById('studio')!;
void resumeSaved().finally(() => render(<App />, root));
