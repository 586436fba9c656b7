// The web forms' page (webform.html): ODK Web Forms filling one form, served by this server.
import { createApp } from 'vue';
import { webFormsPlugin } from '@getodk/web-forms';
import WebFormPage from './WebFormPage.vue';
import { browserLanguages, language, messages } from './messages.ts';
import { localizeWidgets } from './widget-locale.ts';
import './webform.css';

document.documentElement.lang = language;
const app = createApp(WebFormPage).use(webFormsPlugin);
localizeWidgets(app, browserLanguages()[0] ?? language, messages.widgets);
app.mount('#webform');
