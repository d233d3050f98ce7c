import help from '@site/.generated/cli-help.json';
import CodeBlock from '@theme/CodeBlock';
import type { ReactNode } from 'react';

interface Props {
  /** The arguments after `imagegen`, one of those cli-help.mts runs, e.g. `run sd/text2image --help`. */
  args: string;
}

/** What `imagegen <args>` prints, as the program printed it when the site was built (cli-help.mts). */
export default function CliHelp({ args }: Props): ReactNode {
  const text = (help as Record<string, string>)[args];
  if (text === undefined) throw new Error(`cli-help.mts does not run \`imagegen ${args}\``);
  return (
    <CodeBlock language="text" title={`imagegen ${args}`}>
      {text}
    </CodeBlock>
  );
}
