'use strict';
// Preloaded (`node -r`) into a test's child process so that it runs the TypeScript sources as
// jest does (jest.config.js): each .ts file compiled by swc when required, and the @herald/*
// aliases mapped onto libs/*/src. The child then tests the code of the tree, not a stale dist/.
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const { transformSync } = require('@swc/core');

const root = path.join(__dirname, '..', '..');
const { $schema, ...options } = JSON.parse(fs.readFileSync(path.join(root, '.swcrc'), 'utf8'));

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request.startsWith('@herald/')) request = path.join(root, 'libs', request.slice('@herald/'.length), 'src', 'index.ts');
  return resolve.call(this, request, ...rest);
};
Module._extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), { ...options, swcrc: false, filename, sourceMaps: 'inline' });
  module._compile(code, filename);
};
process.setSourceMapsEnabled(true);
