import type { ReactNode } from 'react';
import { InlineCode } from './EngineNoteBody.tsx';
import styles from './RecordedExchange.module.css';
import {
  engineSentence,
  MOMENT_LABELS,
  outputsSentence,
  type RecordedExchange,
} from './recorded-exchange.ts';

/** Shows a block of code; the site passes its highlighting CodeBlock. */
export type ShowCode = (text: string, language: string) => ReactNode;

const plainCode: ShowCode = (text, language) => (
  <pre>
    <code className={`language-${language}`}>{text}</code>
  </pre>
);

const json = (value: unknown) => JSON.stringify(value, null, 2);

/**
 * A recorded exchange: the request, then every answer in the order the task went through them,
 * and what its links served. Kept free of theme imports for tests.
 */
export function RecordedExchangeBody({
  recording,
  code = plainCode,
}: {
  recording: RecordedExchange;
  code?: ShowCode;
}): ReactNode {
  const { request, answers, outputs } = recording;
  return (
    <section
      className={styles.exchange}
      data-recorded-path={recording.path}
      data-engine={recording.engine}
      aria-label={`Recorded exchange with ${recording.path}`}
    >
      <p>
        A real exchange with this release, recorded from the API and checked by its tests.{' '}
        <InlineCode text={engineSentence(recording.engine)} /> Ids, links and timings change with every run;
        they are written as placeholders such as <code>{'<task-id>'}</code>.
      </p>
      <p>
        The request: <code>{`${request.method} ${request.path}`}</code> with this body:
      </p>
      {code(json(request.body), 'json')}
      <ol className={styles.answers}>
        {answers.map((answer) => (
          <li key={answer.moment} data-moment={answer.moment}>
            <p>
              {MOMENT_LABELS[answer.moment]}: <code>{`${answer.method} ${answer.path}`}</code> answers{' '}
              <code>{answer.status}</code>:
            </p>
            {code(json(answer.body), 'json')}
          </li>
        ))}
      </ol>
      {outputs.length > 0 && <p>Its download links served {outputsSentence(outputs)}.</p>}
    </section>
  );
}
