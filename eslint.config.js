import js from '@eslint/js';
import pluginVue from 'eslint-plugin-vue';
import tseslint from 'typescript-eslint';

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
      ],
    },
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
