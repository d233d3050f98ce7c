#!/usr/bin/env node
// The `imagegen` command. In the repository it runs the TypeScript source through tsx, so
// `npx imagegen` works right after `npm ci` with nothing built; an installed copy (npm pack, then
// npm install -g) has no source and runs the bundle that `npm pack` built into dist/.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/bin.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import(new URL('../dist/cli.js', import.meta.url).href);
}
