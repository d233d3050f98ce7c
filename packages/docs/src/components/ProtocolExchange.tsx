import recordings from '@site/.generated/protocol-exchanges.json';
import CodeBlock from '@theme/CodeBlock';
import type { ReactNode } from 'react';
import { ProtocolExchangeBody } from './ProtocolExchangeBody.tsx';
import type { ProtocolExchange as Recording } from './protocol-exchange.ts';

/**
 * A recorded exchange of another protocol the API speaks (examples/recorded-protocols/<name>.json,
 * bundled into .generated/protocol-exchanges.json by the prebuild/prestart scripts), which the docs
 * test keeps true.
 */
export default function ProtocolExchange({ name }: { name: string }): ReactNode {
  const recording = (recordings as unknown as Record<string, Recording>)[name];
  if (!recording) {
    throw new Error(`ProtocolExchange: ${name} has no recording; npm run --silent docs:examples records it`);
  }
  return (
    <ProtocolExchangeBody
      recording={recording}
      code={(text, language) => <CodeBlock language={language}>{text}</CodeBlock>}
    />
  );
}
