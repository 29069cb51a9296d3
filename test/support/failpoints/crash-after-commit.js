// A failpoint for the crash-safety suites, preloaded into a role with `node --require` (see
// crashAfterCommit in herald-process.ts), so that production code carries no fault switch: the
// process kills itself (SIGKILL) the first time the API's Dispatcher is asked to dispatch, that
// is after an accepted email's transaction committed and before it is published or answered.
'use strict';
const Module = require('node:module');

const load = Module._load;
Module._load = function (request, parent, isMain) {
  const exports = load.call(this, request, parent, isMain);
  const Dispatcher = exports && exports.Dispatcher;
  if (typeof Dispatcher === 'function' && typeof Dispatcher.prototype.dispatch === 'function' && !Dispatcher.crashAfterCommit) {
    Dispatcher.crashAfterCommit = true;
    // A single email's commands, or a broadcast chunk's in one message.
    Dispatcher.prototype.dispatch = Dispatcher.prototype.dispatchChunk = function () {
      process.kill(process.pid, 'SIGKILL');
      return new Promise(() => undefined);
    };
  }
  return exports;
};
