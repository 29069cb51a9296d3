// Lint for what the type checker does not catch: promises nobody awaits, switches that miss a
// case, and imports that cross a boundary. Typed linting over the whole tree (`npm run lint`,
// part of `npm test`); test/lint/boundaries.e2e-spec.ts plants one violation of each boundary
// kind in test/lint/fixtures and checks this config reports it.
import boundaries from 'eslint-plugin-boundaries';
import tseslint from 'typescript-eslint';

const SPEC_FILES = ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'];
const PERSISTENCE_MODULES = ['typeorm', '@nestjs/typeorm', 'pg'];

// The fixture tree mirrors the real layout, so the same element patterns classify both.
const FIXTURES = 'test/lint/fixtures';

const boundarySettings = {
  'import/resolver': { typescript: { project: `${import.meta.dirname}/tsconfig.json` } },
  'boundaries/root-path': import.meta.dirname,
  'boundaries/legacy-templates': false,
  'boundaries/elements': [
    { type: 'testing', pattern: ['libs/testing', `${FIXTURES}/libs/testing`], partialMatch: false },
    { type: 'lib', pattern: ['libs/*', `${FIXTURES}/libs/*`], capture: ['lib'], partialMatch: false },
    // The dashboard is a browser bundle: it may import packages and itself, never a lib (server code).
    { type: 'dashboard', pattern: 'apps/dashboard', partialMatch: false },
    { type: 'app', pattern: ['apps/*', `${FIXTURES}/apps/*`], capture: ['app'], partialMatch: false },
    { type: 'test', pattern: 'test', partialMatch: false },
  ],
  'boundaries/files': [
    { category: 'spec', pattern: SPEC_FILES },
    { category: 'persistence', pattern: ['**/*.repository.ts', '**/*.entity.ts', '**/*.module.ts'] },
    { category: 'migration', pattern: 'libs/database/src/migrations/**' },
  ],
};

// Policies are read top to bottom; the last one that matches an import decides. Specs may import
// test code and TypeORM, but reach other contexts through their index like production code does;
// test/** outside the libs and apps is not checked (harnesses and benches drive everything).
const PRODUCTION = { element: { type: ['lib', 'app'] } };
const boundaryPolicies = [
  { allow: { to: { module: { origin: ['external', 'core'] } } } },
  { from: { element: { type: ['testing', 'test'] } }, allow: { to: { module: { origin: '*' } } } },
  { from: PRODUCTION, allow: { to: { element: { type: 'lib' } } } },
  {
    from: { element: { type: 'app', captured: { app: 'cli' } } },
    allow: { to: { element: { type: 'app', fileInternalPath: 'src/*.app.ts' } } },
  },
  {
    from: PRODUCTION,
    disallow: [
      { to: { element: { type: 'lib', fileInternalPath: '!src/index.ts' } } },
      { to: { element: { type: 'lib' } }, dependency: { source: '!@herald/*' } },
    ],
    message: 'deep-import: reach libs/{{to.element.captured.lib}} through @herald/{{to.element.captured.lib}}, not {{dependency.source}}',
  },
  {
    from: { element: { type: 'lib', captured: { lib: 'emails' } } },
    disallow: { to: { element: { type: 'lib', captured: { lib: 'delivery' } } } },
    message: 'emails-delivery: accepting mail must not depend on delivering it (libs/emails imports libs/delivery)',
  },
  {
    from: { element: { type: 'lib', captured: { lib: 'delivery' } } },
    disallow: { to: { element: { type: 'lib', captured: { lib: 'emails' } } } },
    message: 'emails-delivery: delivering mail must not depend on accepting it (libs/delivery imports libs/emails)',
  },
  {
    from: PRODUCTION,
    disallow: { to: { module: { source: PERSISTENCE_MODULES } } },
    message: 'service-typeorm: only *.repository.ts, *.entity.ts and *.module.ts may import {{to.module.source}}',
  },
  {
    from: [{ element: { type: 'lib', captured: { lib: 'database' } } }, { file: { categories: ['persistence', 'migration', 'spec'] } }],
    allow: { to: { module: { source: PERSISTENCE_MODULES } } },
  },
  {
    from: PRODUCTION,
    disallow: { to: { element: { type: ['testing', 'test'] } } },
    message: 'test-code: production code imports {{dependency.source}} (test helpers are for specs only)',
  },
  { from: { file: { categories: 'spec' } }, allow: { to: { element: { type: ['testing', 'test'] } } } },
  {
    from: { element: { type: 'dashboard' } },
    disallow: { to: { element: { type: ['lib', 'testing', 'test', 'app'] } } },
    message: 'dashboard: the browser bundle imports {{dependency.source}}, which is server or test code',
  },
  // The one isomorphic lib: the broadcast editor's preview runs the renderer that sends the email (pure, no Node API).
  {
    from: { element: { type: 'dashboard' } },
    allow: { to: { element: { type: 'lib', captured: { lib: 'email-documents' }, fileInternalPath: 'src/index.ts' } } },
  },
];

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.data/**', `${FIXTURES}/**`],
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    files: ['apps/**/*.ts', 'apps/**/*.tsx', 'libs/**/*.ts', `${FIXTURES}/**/*.ts`],
    plugins: { boundaries },
    settings: boundarySettings,
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          checkAllOrigins: true,
          message: 'boundary: no policy lets {{from.type}} {{from.element.captured.lib}}{{from.element.captured.app}} import {{dependency.source}}',
          policies: boundaryPolicies,
        },
      ],
    },
  },
);
