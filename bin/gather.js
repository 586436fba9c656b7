#!/usr/bin/env node
// Entry point for `gather` / `npm start`: runs the TypeScript sources through tsx (no build step).
import { register } from 'tsx/esm/api';
register();
const { runCli } = await import('../src/cli.ts');
await runCli(process.argv.slice(2));
