#!/usr/bin/env node
// The operator CLI and the process launcher (`herald all`, `herald api`, ...). It runs the
// compiled output in dist/, mapping the @herald/* library aliases onto it.
'use strict';
const path = require('node:path');
const Module = require('node:module');
const fs = require('node:fs');

const dist = path.join(__dirname, '..', 'dist');
const entry = path.join(dist, 'apps', 'cli', 'src', 'main.js');
if (!fs.existsSync(entry)) {
  process.stderr.write('herald: dist/ is missing; run `npm run build` (npm install runs it too)\n');
  process.exit(1);
}
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request.startsWith('@herald/')) {
    request = path.join(dist, 'libs', request.slice('@herald/'.length), 'src', 'index.js');
  }
  return resolve.call(this, request, ...rest);
};
process.setSourceMapsEnabled(true);
require(entry);
