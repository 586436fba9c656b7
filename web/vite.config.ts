// Builds the web app into web/dist (bin/build-web.js runs it). Everything the page loads is
// bundled here: no CDN, no web fonts, nothing fetched at run time but the API.
import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineConfig, type Plugin } from 'vite';

const gather = process.env['GATHER_DEV_SERVER'] ?? 'http://127.0.0.1:8000';

/**
 * The web form page's first script imports the form engine only after it has started the page's
 * requests (web/src/webform/main.ts); the page still asks for the engine's scripts at once, as
 * module preloads in webform.html, so that they load while those requests are answered.
 */
function preloadWebFormEngine(): Plugin {
  return {
    name: 'gather:preload-web-form-engine',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(_html, context) {
        const { chunk: entry, bundle } = context;
        if (!context.filename.endsWith('webform.html') || !entry || !bundle) return undefined;
        const files = new Set<string>();
        const visit = (file: string): void => {
          const chunk = bundle[file];
          if (!chunk || chunk.type !== 'chunk' || files.has(file) || entry.imports.includes(file)) return;
          files.add(file);
          for (const next of chunk.imports) visit(next);
        };
        for (const file of entry.dynamicImports) visit(file);
        const styles = [...files].flatMap((file) => {
          const chunk = bundle[file];
          return chunk?.type === 'chunk' ? [...(chunk.viteMetadata?.importedCss ?? [])] : [];
        });
        return [
          ...[...files].map((file) => ({ tag: 'link', attrs: { rel: 'modulepreload', crossorigin: '', href: `/${file}` }, injectTo: 'head' as const })),
          // Fetched now, applied when the page imports its chunk: a stylesheet here would hold the first script back.
          ...styles.map((file) => ({ tag: 'link', attrs: { rel: 'preload', as: 'style', crossorigin: '', href: `/${file}` }, injectTo: 'head' as const })),
        ];
      },
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [vue(), preloadWebFormEngine()],
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
