// The web forms' page (webform.html). This first script is small: it starts every request the
// page needs (startup.ts) and only then imports the form engine and the page (app.ts, 3 MB of
// scripts, which webform.html also preloads), so that both arrive together.
import { language, messages } from './messages.ts';
import { webFormPage } from './paths.ts';
import { startLoading } from './startup.ts';
import './webform.css';

document.documentElement.lang = language;
const page = webFormPage(window.location);
const startup = page ? startLoading(page) : undefined;
import('./app.ts')
  .then(({ mountWebForm }) => mountWebForm(startup))
  .catch(() => {
    const root = document.getElementById('webform');
    if (root) root.textContent = messages.cannotOpen;
  });
