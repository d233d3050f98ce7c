/**
 * Code samples of one request, one tab each, the reader's language choice shared across the
 * site: the endpoint pages' examples and the playground's "Copy as" (each block has its copy
 * button).
 */
import CodeBlock from '@theme/CodeBlock';
import TabItem from '@theme/TabItem';
import Tabs from '@theme/Tabs';
import type { ReactNode } from 'react';

export interface Sample {
  value: string;
  label: string;
  /** The highlighter's language: bash, ts, python. */
  language: string;
  code: string;
}

export default function SampleTabs({ samples }: { samples: readonly Sample[] }): ReactNode {
  return (
    <Tabs groupId="language">
      {samples.map((sample) => (
        <TabItem key={sample.value} value={sample.value} label={sample.label}>
          <CodeBlock language={sample.language}>{sample.code}</CodeBlock>
        </TabItem>
      ))}
    </Tabs>
  );
}
