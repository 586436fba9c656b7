// The web form page itself: Vue, ODK Web Forms (engine and widgets) and WebFormPage.vue, mounted
// with the requests main.ts started.
import { createApp } from 'vue';
import { webFormsPlugin } from '@getodk/web-forms';
import WebFormPage from './WebFormPage.vue';
import { browserLanguages, language, messages } from './messages.ts';
import type { Startup } from './startup.ts';
import { localizeWidgets } from './widget-locale.ts';

export function mountWebForm(startup: Startup | undefined): void {
  const app = createApp(WebFormPage, { startup }).use(webFormsPlugin);
  localizeWidgets(app, browserLanguages()[0] ?? language, messages.widgets);
  app.mount('#webform');
}
