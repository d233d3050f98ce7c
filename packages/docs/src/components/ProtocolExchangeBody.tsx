import type { ReactNode } from 'react';
import { type FormPart, type ProtocolExchange, type ProtocolStep, requestLine } from './protocol-exchange.ts';
import styles from './RecordedExchange.module.css';
import type { ShowCode } from './RecordedExchangeBody.tsx';

const plainCode: ShowCode = (text, language) => (
  <pre>
    <code className={`language-${language}`}>{text}</code>
  </pre>
);

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** The request as HTTP writes it: its line, its headers, then its body (a form as its parts). */
function requestText(step: ProtocolStep): string {
  const { request } = step;
  const head = [
    requestLine(request),
    ...Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  const part = (p: FormPart) =>
    'value' in p ? `${p.name}=${p.value}` : `${p.name}=@${p.file} (${p.type}, ${p.size})`;
  const body = request.form
    ? request.form.map(part).join('\n')
    : request.body === undefined
      ? ''
      : json(request.body);
  return body ? `${head.join('\n')}\n\n${body}` : head.join('\n');
}

/** The answer: its status and headers, then its JSON body or its stream's events, one `data:` each. */
function answerText(step: ProtocolStep): string {
  const { answer } = step;
  const head = [
    `HTTP ${answer.status}`,
    ...Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  const body = answer.events
    ? answer.events.map((event) => `data: ${JSON.stringify(event)}`).join('\n\n')
    : json(answer.body);
  return `${head.join('\n')}\n\n${body}`;
}

/**
 * A recorded exchange of another protocol the API speaks: each step's request as sent and the
 * answer as the API gave it, and what its image links served. Kept free of theme imports for tests.
 */
export function ProtocolExchangeBody({
  recording,
  code = plainCode,
}: {
  recording: ProtocolExchange;
  code?: ShowCode;
}): ReactNode {
  return (
    <section
      className={styles.exchange}
      data-protocol-recording={recording.name}
      aria-label={`Recorded exchange: ${recording.name}`}
    >
      <p>
        A real exchange with this release, recorded from the API and checked by its tests (the comfyui engine,
        against a stand-in ComfyUI). Ids, links, keys, times and image data change with every run; they are
        written as placeholders such as <code>{'<task-id>'}</code>.
      </p>
      <ol className={styles.answers}>
        {recording.steps.map((step) => (
          <li key={step.title} data-step={step.title}>
            <p>{step.title}:</p>
            {code(requestText(step), 'http')}
            {code(answerText(step), 'http')}
            {step.answer.served && <p>The links served: {step.answer.served.join('; ')}.</p>}
          </li>
        ))}
      </ol>
    </section>
  );
}
