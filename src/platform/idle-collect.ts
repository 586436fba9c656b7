// One full garbage collection once the server has started. Starting (migrations, building the
// app, compiling its schemas) leaves garbage that an idle server never collects: V8 runs no full
// collection until the heap reaches its first limit, and it hands unused heap pages back to the
// system (its memory reducer) only after one. Needs `--expose-gc`, which `npm start` gives;
// without it nothing is done.

/** Collects once, `delayMs` after now, without keeping the process alive. */
export function collectOnceAfter(delayMs: number): void {
  const collect: unknown = Reflect.get(globalThis, 'gc');
  if (typeof collect !== 'function') return;
  setTimeout(() => Reflect.apply(collect, globalThis, []), delayMs).unref();
}
