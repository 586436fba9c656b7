// node --test reporter for scripts/test-alone.mjs: one JSON line per finished test or suite.
export default async function* testAloneReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, nesting, skip, details } = event.data;
    const failed = event.type === 'test:fail';
    const error = failed ? String(details?.error?.cause ?? details?.error?.message ?? details?.error ?? '') : undefined;
    yield `${JSON.stringify({ name, nesting, suite: details?.type === 'suite', skip: skip !== undefined && skip !== false, failed, error })}\n`;
  }
}
