import { serveChild } from '../../src/threads/serve-child.ts';

/** A child for the process pool's tests: answers its pid, sleeps, hangs, fails or dies as asked. */
export type TestChildRequest =
  | { readonly op: 'pid' }
  | { readonly op: 'sleep'; readonly ms: number }
  | { readonly op: 'hang' }
  | { readonly op: 'fail' }
  | { readonly op: 'exit' }
  | { readonly op: 'echo'; readonly bytes: Uint8Array };

serveChild<TestChildRequest, unknown>(async (request) => {
  switch (request.op) {
    case 'pid':
      return process.pid;
    case 'sleep':
      await new Promise((resolve) => setTimeout(resolve, request.ms));
      return process.pid;
    case 'hang':
      return new Promise(() => {});
    case 'fail':
      throw new Error('it failed on purpose');
    case 'exit':
      process.exit(3);
      break;
    case 'echo':
      return request.bytes.byteLength;
  }
});
