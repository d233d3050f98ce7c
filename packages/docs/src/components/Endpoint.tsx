import Link from '@docusaurus/Link';
import type { ReactNode } from 'react';
import { useRuntimeSettings } from '../client/runtime-settings.ts';
import {
  cliSample,
  curlSample,
  pythonSample,
  type SampleKind,
  sdkSample,
  typescriptSample,
} from './code-samples.ts';
import styles from './Endpoint.module.css';
import {
  operation,
  parameterRows,
  requestExample,
  requestMedia,
  requestSchema,
  responseCodes,
  statusPathOf,
} from './openapi-document.ts';
import SampleTabs, { type Sample } from './SampleTabs.tsx';

interface Props {
  /** The operation's path as the contract writes it, e.g. `/sd/text2image/v1`. */
  path: string;
  method?: 'get' | 'post';
}

/** Renders `code` spans of the contract's Markdown descriptions; the rest stays plain text. */
function InlineMarkdown({ text }: { text: string }): ReactNode {
  return text.split(/(`[^`]+`)/).map((part, i) =>
    part.startsWith('`') && part.endsWith('`') ? (
      // biome-ignore lint/suspicious/noArrayIndexKey: the split is stable for a given text
      <code key={i}>{part.slice(1, -1)}</code>
    ) : (
      part
    ),
  );
}

function sampleKind(path: string, method: string): SampleKind {
  if (method === 'get') return 'read';
  if (requestMedia(path, method)?.contentType.startsWith('multipart/')) return 'upload';
  if (path.startsWith('/train_model/')) return 'training';
  return 'task';
}

/** Method, URL, status path and the contract's own summary of one operation. */
export function EndpointSummary({ path, method = 'post' }: Props): ReactNode {
  const { apiUrl } = useRuntimeSettings();
  const op = operation(path, method);
  const statusPath = method === 'post' ? statusPathOf(path) : undefined;
  return (
    <div className={styles.endpoint}>
      <p>
        <span className={styles.method}>{method.toUpperCase()}</span> <code>{`${apiUrl}${path}`}</code>
      </p>
      {statusPath && (
        <p>
          <span className={styles.method}>GET</span> <code>{`${apiUrl}${statusPath}`}</code>
        </p>
      )}
      {op.description && (
        <p>
          <InlineMarkdown text={op.description.split('\n\n')[0] ?? ''} />
        </p>
      )}
      <p className={styles.note}>
        Every request carries your key in the <code>API-Key</code> header.
      </p>
      {statusPath && (
        // A plain link: the playground's code loads on its own page only.
        <p>
          <Link
            className="button button--primary button--sm"
            to={`/playground?pipeline=${encodeURIComponent(path)}`}
          >
            Try it<span className="sr-only"> ({path}) in the playground</span>
          </Link>
        </p>
      )}
    </div>
  );
}

/**
 * The request body's fields with type, requirement, default, bounds and allowed values. `fields`
 * narrows the table to the fields a parameter page is about.
 */
export function ParameterTable({ path, method = 'post', fields }: Props & { fields?: string[] }): ReactNode {
  const schema = requestSchema(path, method);
  const query = fields ? [] : (operation(path, method).parameters ?? []);
  if (!schema && query.length === 0) return <p>This operation takes no request body.</p>;
  const all = schema ? parameterRows(schema) : [];
  const rows = fields ? all.filter((row) => fields.includes(row.name)) : all;
  if (fields && rows.length !== fields.length) {
    const missing = fields.filter((f) => !rows.some((row) => row.name === f));
    throw new Error(`${path} has no field ${missing.join(', ')} in the OpenAPI document`);
  }
  return (
    // Focusable so keyboard users can scroll a table wider than the page.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section className={styles.tableWrap} tabIndex={0} aria-label={`Request fields of ${path}`}>
      <table className={styles.parameters}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Required</th>
            <th scope="col">Default</th>
            <th scope="col">Bounds</th>
            <th scope="col">Allowed values</th>
            <th scope="col">Description</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.name}>
              <td>
                <code>{row.name}</code>
              </td>
              <td>{row.type}</td>
              <td>{row.required ? 'yes' : 'no'}</td>
              <td>{row.defaultValue && <code>{row.defaultValue}</code>}</td>
              <td>{row.bounds}</td>
              <td className={styles.allowed}>{row.allowed}</td>
              <td>
                <InlineMarkdown text={row.description} />
              </td>
            </tr>
          ))}
          {query.map((p) => (
            <tr key={`query-${p.name}`}>
              <td>
                <code>{p.name}</code> ({p.in})
              </td>
              <td>{p.schema?.type ?? ''}</td>
              <td>{p.required ? 'yes' : 'no'}</td>
              <td>{p.schema?.default !== undefined && <code>{JSON.stringify(p.schema.default)}</code>}</td>
              <td />
              <td />
              <td>{p.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/**
 * Working requests in curl, TypeScript, Python, with the TypeScript SDK and (for a task) the
 * `imagegen` command, built from the contract's example body.
 */
export function RequestExamples({ path, method = 'post' }: Props): ReactNode {
  const { apiUrl } = useRuntimeSettings();
  const input = {
    apiUrl,
    path,
    statusPath: method === 'post' ? statusPathOf(path) : undefined,
    body: requestExample(path, method),
    kind: sampleKind(path, method),
  };
  const samples: Sample[] = [
    { value: 'curl', label: 'curl', language: 'bash', code: curlSample(input) },
    { value: 'typescript', label: 'TypeScript', language: 'ts', code: typescriptSample(input) },
    { value: 'python', label: 'Python', language: 'python', code: pythonSample(input) },
    { value: 'sdk', label: 'TypeScript SDK', language: 'ts', code: sdkSample(input) },
  ];
  if (input.kind === 'task' || input.kind === 'training') {
    samples.push({ value: 'cli', label: 'imagegen CLI', language: 'bash', code: cliSample(input) });
  }
  return <SampleTabs samples={samples} />;
}

/** What the submission and the status path answer, in order, for this operation. */
export function TaskLifecycle({ path }: Props): ReactNode {
  const statusPath = statusPathOf(path);
  if (!statusPath) return null;
  if (path.startsWith('/train_model/')) {
    return (
      <ol>
        <li>
          <code>POST {path}</code> answers <code>{'{"id": "...", "status": "queued"}'}</code>.
        </li>
        <li>
          <code>GET {statusPath}</code> answers <code>{'{"status": "..."}'}</code> with <code>queued</code>,{' '}
          <code>initialising</code> or <code>running</code> while the training goes on (<code>unknown</code>{' '}
          if the worker lost track of it).
        </li>
        <li>
          It ends with{' '}
          <code>{'{"status": "completed", "model_id": "...", "training_duration_seconds": 312}'}</code> or{' '}
          <code>failed</code> with an <code>error</code>.
        </li>
      </ol>
    );
  }
  const loads = path === '/load_model/v1' || path === '/sync_model/v1';
  return (
    <ol>
      <li>
        <code>POST {path}</code> validates the body and answers{' '}
        <code>{'{"status": "PENDING", "id": "..."}'}</code> at once; the work runs in the background.
      </li>
      <li>
        <code>GET {statusPath}</code> answers <code>{'{"status": "PENDING"}'}</code> while the task waits or
        runs. Poll every one to five seconds; a webhook saves you the polling.
      </li>
      <li>
        {loads ? (
          <>
            Success: <code>{'{"status": "SUCCESS", "model_id": "..."}'}</code>: the model is ready to use by
            that id.
          </>
        ) : (
          <>
            Success: <code>{'{"status": "SUCCESS", "download_urls": ["..."]}'}</code>. With{' '}
            <code>queued_image_urls: true</code> the submission already returns the links, which fill once the
            task succeeds.
          </>
        )}
      </li>
      <li>
        Failure: <code>{'{"status": "FAILURE", "error": "..."}'}</code>. The error says why (an input image
        that could not be fetched, a model that is not loaded, a safety check): fix the cause before
        submitting again.
      </li>
    </ol>
  );
}

const ERROR_ADVICE: Record<string, string> = {
  '200': 'Accepted or answered. A task can still end in FAILURE: read its status.',
  '401': 'The API-Key header is missing or unknown. Check the key; do not retry.',
  '404': 'No such task, model or record for this key. Ids are scoped to the key that created them.',
  '422':
    'The body did not validate: detail lists each problem with loc (e.g. ["body", "samples"]), msg and type. Fix the field named by loc.',
  '429': 'Your plan’s rate or quota is used up. Wait and retry with backoff.',
};

/** The HTTP answers this operation documents, with what to do about each. */
export function ErrorResponses({ path, method = 'post' }: Props): ReactNode {
  const codes = responseCodes(path, method);
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Status</th>
          <th scope="col">Meaning and handling</th>
        </tr>
      </thead>
      <tbody>
        {codes.map(({ code, description }) => (
          <tr key={code}>
            <td>
              <code>{code}</code>
            </td>
            <td>{ERROR_ADVICE[code] ?? description}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
