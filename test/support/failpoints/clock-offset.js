// A fault for the clock-skew scenario (16), preloaded into a role with `node --require` (see
// clockOffset in herald-process.ts): the process's wall clock runs HERALD_TEST_CLOCK_OFFSET_MS
// ahead (negative: behind), as on a host whose NTP failed. `Date.now()` and `new Date()` are
// shifted; timers and `performance.now()` are not, as with a real clock that is off.
'use strict';
const offset = Number(process.env.HERALD_TEST_CLOCK_OFFSET_MS || 0);
if (offset) {
  const RealDate = Date;
  class SkewedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...args);
    }
    static now() {
      return RealDate.now() + offset;
    }
  }
  globalThis.Date = SkewedDate;
}
