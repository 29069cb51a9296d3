// One runner for every tier. Unit specs sit beside the code (*.spec.ts); integration specs
// (*.int-spec.ts) talk to the machine's real Postgres, Redis and NATS; end-to-end suites live
// in test/ (*.e2e-spec.ts) and drive running roles through their real interfaces.
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
};

module.exports = {
  testEnvironment: 'node',
  rootDir: __dirname,
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/test'],
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest', swc] },
  // axe-core's bundle reads the global `this` at its top, which a CommonJS transform turns into undefined.
  transformIgnorePatterns: ['/node_modules/axe-core/'],
  testRegex: '.*\\.(spec|int-spec|e2e-spec)\\.ts$',
  moduleNameMapper: { '^@herald/(.*)$': '<rootDir>/libs/$1/src/index.ts' },
  globalSetup: '<rootDir>/test/global-setup.ts',
  testTimeout: 60000,
};
