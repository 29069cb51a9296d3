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
  // Known leak (issue 17): after the fault suites (test/faults), whose roles run as child
  // processes behind TCP proxies, something keeps the jest process busy once every test has
  // finished, so it never exits. Until it is found, jest exits when the run is complete.
  forceExit: true,
};
