// The web forms' page (webform.html): ODK Web Forms filling one form, served by this server.
import { createApp } from 'vue';
import { webFormsPlugin } from '@getodk/web-forms';
import WebFormPage from './WebFormPage.vue';
import './webform.css';

createApp(WebFormPage).use(webFormsPlugin).mount('#webform');
