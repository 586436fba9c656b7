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
  // Only the Composition API is used: the Options API's code is left out of the bundle.
  define: { __VUE_OPTIONS_API__: 'false', __VUE_PROD_DEVTOOLS__: 'false', __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Browsers this app supports all preload modules themselves.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    // Vue and the router in a chunk of their own, named for what it holds (pages change more often).
    rolldownOptions: { output: { codeSplitting: { groups: [{ name: 'vendor', test: /node_modules/ }] } } },
  },
  // `npx vite web` for development: the API is the running Gather server.
  server: { proxy: { '/api': gather, '/o': gather } },
});
