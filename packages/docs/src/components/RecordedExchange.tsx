import recordings from '@site/.generated/recorded-exchanges.json';
import CodeBlock from '@theme/CodeBlock';
import type { ReactNode } from 'react';
import { RecordedExchangeBody } from './RecordedExchangeBody.tsx';
import type { RecordedExchange as Recording } from './recorded-exchange.ts';

/**
 * The recorded exchange of a task endpoint (examples/recorded/<slug>.json, bundled into
 * .generated/recorded-exchanges.json by the prebuild/prestart scripts): a real request and every
 * answer the API gave it, which the docs test keeps true.
 */
export default function RecordedExchange({ path }: { path: string }): ReactNode {
  const recording = (recordings as unknown as Record<string, Recording>)[path];
  if (!recording) {
    throw new Error(`RecordedExchange: ${path} has no recording; npm run --silent docs:examples records it`);
  }
  return (
    <RecordedExchangeBody
      recording={recording}
      code={(text, language) => <CodeBlock language={language}>{text}</CodeBlock>}
    />
  );
}
