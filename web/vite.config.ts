// Builds the web app into web/dist (bin/build-web.js runs it). Everything the page loads is
// bundled here: no CDN, no web fonts, nothing fetched at run time but the API.
import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

const gather = process.env['GATHER_DEV_SERVER'] ?? 'http://127.0.0.1:8000';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [vue()],
  // The app uses only the Composition API, but ODK Web Forms' components (PrimeVue) need the
  // Options API, and Vue's build flag holds for both pages.
  define: { __VUE_OPTIONS_API__: 'true', __VUE_PROD_DEVTOOLS__: 'false', __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Browsers this app supports all preload modules themselves.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    // dist/.vite/manifest.json: the server lists the web forms' files from it for their service
    // worker to keep at install (src/http/web-app.ts).
    manifest: true,
    // ODK Web Forms is one 1.7 MB module, loaded only by the web forms' pages.
    chunkSizeWarningLimit: 2048,
    rolldownOptions: {
      // ODK Web Forms' bundle holds a direct eval that is never reached by these pages.
      checks: { eval: false },
      // Two pages: the app (index.html) and the web forms (webform.html), whose form engine is
      // loaded only by the forms' pages.
      // The web forms' service worker keeps a fixed name (dist/webform-sw.js, served as /forms/sw.js).
      input: {
        app: fileURLToPath(new URL('index.html', import.meta.url)),
        webform: fileURLToPath(new URL('webform.html', import.meta.url)),
        'webform-sw': fileURLToPath(new URL('src/webform/sw.ts', import.meta.url)),
      },
      output: {
        entryFileNames: (chunk) => (chunk.name === 'webform-sw' ? 'webform-sw.js' : 'assets/[name]-[hash].js'),
        // Vue and the router in a chunk of their own, named for what it holds (pages change more often).
        codeSplitting: { groups: [{ name: 'vendor', test: /node_modules[\\/](?:@vue|vue|vue-router)[\\/]/ }] },
      },
    },
  },
  // `npx vite web` for development: the API is the running Gather server.
  server: { proxy: { '/api': gather, '/o': gather, '^/forms/\\d+/(formList|submission)': gather, '^/[^/]+/(forms|xformsManifest|xformsMedia)/': gather } },
});
