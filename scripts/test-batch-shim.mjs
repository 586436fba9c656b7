// What the compiled test files get when they import 'node:test' (scripts/compile-tests.mjs).
// Outside a batch every call goes straight to node:test. A batch (scripts/test-batches.mjs)
// loads several test files into one process: while it loads a file it records that file's
// top-level calls, then replays them inside a `describe` named after the file, so each file's
// top-level `before` and `after` hooks run around that file's own tests, as they would in a
// process of its own. Calls made while tests run (inside a describe, a hook or a test) always
// go straight to node:test.
import * as nodeTest from 'node:test';

let recording = null;

/** Records the top-level calls that follow into `calls` (an array), or stops recording (null). */
export function recordInto(calls) {
  recording = calls;
}

/** Makes each recorded call, in order, on node:test. */
export function replay(calls) {
  for (const [kind, args] of calls) nodeTest[kind](...args);
}

const hookKinds = new Set(['before', 'after', 'beforeEach', 'afterEach']);

/**
 * Makes the recorded calls with the tests in reverse order, hooks first, and the same inside each
 * suite (scripts/test-alone.mjs --reverse): a test that needs what an earlier one left behind
 * fails. A suite's callback runs while its suite is built, so its calls are recorded then.
 */
export function replayReversed(calls) {
  for (const [kind, args] of calls) if (hookKinds.has(kind)) nodeTest[kind](...args);
  const rest = calls.filter(([kind]) => !hookKinds.has(kind)).reverse();
  for (const [kind, args] of rest) nodeTest[kind](...(kind === 'describe' || kind === 'suite' ? reversedSuite(args) : args));
}

function reversedSuite(args) {
  const at = args.findIndex((arg) => typeof arg === 'function');
  if (at === -1) return args;
  const build = args[at];
  const copy = [...args];
  copy[at] = (...suiteArgs) => {
    const inner = [];
    const outer = recording;
    recording = inner;
    try {
      build(...suiteArgs);
    } finally {
      recording = outer;
    }
    replayReversed(inner);
  };
  return copy;
}

function forwarding(kind) {
  return (...args) => {
    if (recording) recording.push([kind, args]);
    else return nodeTest[kind](...args);
  };
}

export const test = forwarding('test');
export const it = forwarding('it');
export const describe = forwarding('describe');
export const suite = forwarding('suite');
export const before = forwarding('before');
export const after = forwarding('after');
export const beforeEach = forwarding('beforeEach');
export const afterEach = forwarding('afterEach');
export const mock = nodeTest.mock;
export const run = nodeTest.run;
export default test;
