import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import pluginVue from 'eslint-plugin-vue';
import tseslint from 'typescript-eslint';

const CATALOGUE_ONLY = {
  selector: "NewExpression[callee.name='AppError']",
  message: 'Refusals are entries of the error catalogue (src/errors.ts, src/errors/<area>.ts): add or use a named entry.',
};
// Issue #23: one way to open a transaction, which joins the caller's own (src/platform/db.ts).
const ONE_TRANSACTION_HELPER = {
  selector: "CallExpression[callee.property.name='transaction'][arguments.length=0]",
  message: "Open transactions with inTransaction (src/platform/db.ts): it joins the caller's transaction when there is one.",
};
const CATALOGUE_SHAPES = {
  group: ['**/errors/shapes.ts', '**/errors/app-error.ts'],
  message: 'Body shapes are private to the error catalogue: import errors from src/errors.ts and throw a named entry.',
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'tmp/**', 'web/dist/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // The web app's single-file components, their scripts parsed as TypeScript.
  ...pluginVue.configs['flat/recommended'],
  {
    files: ['web/**/*.vue'],
    languageOptions: { parserOptions: { parser: tseslint.parser } },
    rules: {
      // vue-tsc checks names, as tsc does for .ts files.
      'no-undef': 'off',
      // The templates' layout is left to the author.
      'vue/max-attributes-per-line': 'off',
      'vue/singleline-html-element-content-newline': 'off',
      'vue/html-self-closing': ['error', { html: { void: 'any', normal: 'never', component: 'always' } }],
    },
  },
  // Layers (ARCHITECTURE.md): dependencies point down; the composition roots (src/app.ts for
  // HTTP, src/compose.ts for jobs, src/runtime.ts for the dependencies) wire modules in.
  {
    files: ['src/**/*.ts', 'packages/*/src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js'] })],
      // Imported files are parsed as TypeScript too, so that cycles through them are seen.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', {
        zones: [
          {
            // Pure libraries: no I/O layer, no module, no HTTP.
            target: ['./src/platform', './src/lib', './packages/xlsform/src'],
            from: ['./src/http', './src/access', './src/jobs'],
            message: 'Platform and pure libraries import no HTTP, access or jobs code.',
          },
          {
            target: ['./src/platform', './src/lib', './packages/xlsform/src'],
            from: './src/modules',
            message: 'Platform and pure libraries import no module.',
          },
          {
            target: './src/jobs',
            from: ['./src/modules', './src/http'],
            message: 'src/jobs runs what src/compose.ts registers: it imports no module.',
          },
          {
            target: './src/access',
            from: './src/modules',
            // The loader reads forms and projects through their repositories (data access, never a
            // service); a Principal carries the user's row. Types and SQL only.
            except: ['./forms/repository.ts', './projects/repository.ts', './accounts/repository.ts'],
            message: 'src/access decides; it reads through repositories only (see the exceptions).',
          },
          {
            // AppDeps names the caches by the interfaces of src/caches.ts; the modules' classes
            // implement them and src/runtime.ts builds them.
            target: ['./src/context.ts', './src/caches.ts'],
            from: './src/modules',
            message: 'The request context names no module: declare what it carries in src/caches.ts.',
          },
          {
            // Authentication names what it needs (src/http/credentials.ts); src/app.ts hands in
            // the auth and OAuth modules' checks.
            target: './src/http',
            from: './src/modules',
            message: 'src/http is below the modules: wire them in through src/app.ts.',
          },
          {
            // Services take typed inputs; the routes (routes.ts, *-routes.ts), the reading of their
            // bodies into those inputs (inputs.ts) and what they answer (schemas.ts) are the HTTP side.
            target: './src/modules/**/!(*routes|schemas|inputs).ts',
            from: './src/http',
            message: 'Services do not use the HTTP layer: parse requests into typed inputs in the routes.',
          },
          {
            target: './src/modules/**/!(*routes|inputs).ts',
            from: './src/modules/**/inputs.ts',
            message: "A module's inputs.ts reads requests for its routes: services take the typed inputs it makes.",
          },
        ],
      }],
    },
  },
  // Type-aware rules: a promise is awaited, returned, or let go with `void` and a reason.
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', {
        // node:test runs the tests and suites these return; nothing awaits them at the top level.
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }],
      }],
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  // Point 5 of issue #23: which forms, projects and records a caller may touch is decided in
  // src/access only. Services load through requireForm / requireProject (src/access/load.ts);
  // they neither look roles up nor assemble the facts the decisions are made from.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/access/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          {
            group: ['**/access/repository.ts'],
            message: 'Role lookups belong to src/access: load through requireForm / requireProject (src/access/load.ts).',
          },
          {
            group: ['**/access/index.ts'],
            importNames: [
              'canSeeForm', 'canSeeProject', 'formAllows', 'projectAllows', 'formRoleAllows', 'projectRoleAllows',
              'seesFullProject', 'recordReadScope', 'recordWriteScope', 'inRecordScope', 'mayReplaceRecord',
              'canReviewSubmissions', 'FormAccessFacts', 'ProjectAccessFacts',
            ],
            message: 'Ask src/access/load.ts (requireForm, requireProject, formStanding): the grant it returns answers allows(), reads(), changes().',
          },
          CATALOGUE_SHAPES,
        ],
      }],
      'no-restricted-syntax': ['error',
        {
          selector: "ObjectExpression:has(> Property[key.name='shared']):has(> Property[key.name='role'])",
          message: 'Access facts ({shared, role}) are built in src/access only: use requireForm / requireProject or formStanding.',
        },
        {
          selector: 'CallExpression[callee.name=/^(form|project)Roles?Of(User)?$/], CallExpression[callee.property.name=/^(form|project)Roles?Of(User)?$/]',
          message: "The caller's role is looked up in src/access only: use requireForm / requireProject (src/access/load.ts).",
        },
        CATALOGUE_ONLY,
        ONE_TRANSACTION_HELPER,
      ],
    },
  },
  // Point 3 of issue #23: the error catalogue (src/errors.ts, src/errors/) is the list of
  // everything the API can refuse. Only it makes an AppError or picks a body shape; the rest
  // throws its named entries. (src/access is outside the block above, so it gets the rules here.)
  {
    files: ['src/access/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [CATALOGUE_SHAPES] }],
      'no-restricted-syntax': ['error', CATALOGUE_ONLY, ONE_TRANSACTION_HELPER],
    },
  },
  {
    files: ['src/errors.ts', 'src/errors/**/*.ts'],
    rules: { 'no-restricted-imports': 'off', 'no-restricted-syntax': 'off' },
  },
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-control-regex': 'off',
    },
  },
);
