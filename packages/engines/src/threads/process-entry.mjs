// Plain-JS entry of every child process started from the sources (start-child.ts): the child does
// not inherit the parent's TypeScript loader (tsx, Vitest), so it registers tsx itself (resolved
// from this file, whatever the current directory) and then loads the module named by its first
// argument (a file URL).
import { register } from 'tsx/esm/api';

register();
await import(process.argv[2]);
