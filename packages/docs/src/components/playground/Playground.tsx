/**
 * The playground: pick a pipeline, fill the form the contract describes (checked as you type by
 * the contract's validator, so the messages are the API's), run it through the client and watch
 * it, copy the same request as curl, the SDK or Python, and reopen recent tasks. The API address
 * is the site's runtime setting; the key stays in this browser (api-key.ts).
 */
import { CANCELLED_ERROR, notedDescription, withSampleImages } from '@imagegen/contract';
import engines from '@site/.generated/engines.json';
import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { runtimeSettings } from '../../client/runtime-settings.ts';
import { curlSample, pythonSample, type SampleInput, sdkSample } from '../code-samples.ts';
import type { EngineCatalogData } from '../engine-note.ts';
import SampleTabs from '../SampleTabs.tsx';
import { useStoredApiKey } from './api-key.ts';
import FieldInput from './FieldInput.tsx';
import {
  applies,
  type Body,
  bodyOf,
  fieldsOf,
  isRequired,
  pipelineOf,
  pipelines,
  problemsOf,
} from './form-model.ts';
import Gallery from './Gallery.tsx';
import styles from './Playground.module.css';
import {
  describeError,
  isRefusedKey,
  type PlaygroundClient,
  playgroundClient,
  type Status,
  TaskFailedError,
  type TaskListEntry,
} from './playground-client.ts';
import RunView, { type RunState } from './RunView.tsx';

const KEY_SETTLE_MS = 400;

/** What the engines of the default order add to the descriptions, as the API reference prints them. */
const NOTES = (engines as EngineCatalogData).notes;

function initialPipeline(): string {
  const asked = new URLSearchParams(window.location.search).get('pipeline');
  return pipelineOf(asked)?.path ?? '/sd/text2image/v1';
}

/** The contract's example of a pipeline, its images being the API's own samples: it runs as it is. */
function exampleOf(path: string, apiUrl: string): Body {
  const example = pipelineOf(path)?.example;
  return example && typeof example === 'object' ? withSampleImages(example as Body, apiUrl) : {};
}

/** Pipelines grouped by their docs section (the contract's tags), in the contract's order. */
function pipelineGroups(): [string, { path: string; summary: string }[]][] {
  const groups = new Map<string, { path: string; summary: string }[]>();
  for (const endpoint of pipelines()) {
    const group = groups.get(endpoint.tag) ?? [];
    group.push({ path: endpoint.path, summary: endpoint.summary });
    groups.set(endpoint.tag, group);
  }
  return [...groups];
}

/** The phase a pending status shows: training names its own states; others are queued until progress shows. */
function pendingPhase(status: Status): RunState['phase'] {
  if (status.status === 'running' || status.status === 'initialising') return 'running';
  if (status.status === 'queued') return 'queued';
  return typeof status.progress === 'number' ? 'running' : 'queued';
}

export default function Playground(): ReactNode {
  const { apiUrl } = runtimeSettings();
  const [path, setPath] = useState(initialPipeline);
  const [values, setValues] = useState<Body>(() => exampleOf(initialPipeline(), apiUrl));
  // A new form (its inputs' texts read again from `values`) for another pipeline or a reopened task.
  const [formRevision, setFormRevision] = useState(0);
  const [touched, setTouched] = useState<ReadonlySet<string>>(new Set());
  const [showAllProblems, setShowAllProblems] = useState(false);
  const [apiKey, setApiKey] = useStoredApiKey();
  const [keyRefusal, setKeyRefusal] = useState<string>();
  const [run, setRun] = useState<RunState>();
  const [galleryRevision, setGalleryRevision] = useState(0);
  const watching = useRef<AbortController>(undefined);

  const endpoint = pipelineOf(path)!;
  const fields = useMemo(() => fieldsOf(endpoint, NOTES), [endpoint]);
  const body = useMemo(() => bodyOf(endpoint, fields, values), [endpoint, fields, values]);
  const problems = useMemo(() => problemsOf(endpoint, body), [endpoint, body]);
  // The key in use once typing stops, so that a half-typed key is not tried (and refused).
  const [settledKey, setSettledKey] = useState(apiKey);
  useEffect(() => {
    const timer = setTimeout(() => setSettledKey(apiKey), KEY_SETTLE_MS);
    return () => clearTimeout(timer);
  }, [apiKey]);
  const client = useMemo<PlaygroundClient | undefined>(
    () => (settledKey ? playgroundClient(apiUrl, settledKey) : undefined),
    [apiUrl, settledKey],
  );
  const imageFields = fields.filter((f) => f.kind === 'image' || f.kind === 'images').map((f) => f.name);

  useEffect(() => {
    const url = new URL(window.location.href);
    url.searchParams.set('pipeline', path);
    window.history.replaceState(window.history.state, '', url);
  }, [path]);
  useEffect(() => () => watching.current?.abort(), []);

  const refused = useCallback((message: string) => setKeyRefusal(message), []);

  const choosePipeline = (next: string, nextValues: Body) => {
    setPath(next);
    setValues(nextValues);
    setTouched(new Set());
    setShowAllProblems(false);
    setFormRevision((n) => n + 1);
  };

  const setField = (name: string, value: unknown) => {
    setValues((current) => {
      const next = { ...current };
      if (value === undefined) delete next[name];
      else next[name] = value;
      return next;
    });
    setTouched((current) => new Set(current).add(name));
  };

  const useImage = (field: string, url: string) => {
    const spec = fields.find((f) => f.name === field);
    const current = values[field];
    setField(field, spec?.kind === 'images' ? [...(Array.isArray(current) ? current : []), url] : url);
    setFormRevision((n) => n + 1);
  };

  const reopen = (task: TaskListEntry) => {
    if (!pipelineOf(task.pipeline)) return;
    choosePipeline(task.pipeline, structuredClone(task.request as Body));
    document.getElementById('playground-form')?.scrollIntoView({ behavior: 'smooth' });
  };

  const start = async () => {
    if (!client) return;
    if (Object.keys(problems).length > 0) {
      setShowAllProblems(true);
      return;
    }
    watching.current?.abort();
    const controller = new AbortController();
    watching.current = controller;
    const update = (change: Partial<RunState>) =>
      setRun((current) => (current && !controller.signal.aborted ? { ...current, ...change } : current));
    setRun({ phase: 'submitting', pipeline: path, startedAt: Date.now() });
    let id: string | undefined;
    try {
      ({ id } = await client.submit(path, body));
      update({ id, phase: 'queued' });
      const final = await client.wait(path, id, {
        signal: controller.signal,
        onProgress: (status) => update({ status, phase: pendingPhase(status) }),
        // The picture as it forms, where the engine sends previews (ComfyUI with a preview method).
        onPreview: (preview) => update({ preview: `data:${preview.content_type};base64,${preview.image}` }),
      });
      update({ phase: 'succeeded', status: final, endedAt: Date.now() });
      const listed = (await client.tasks({ pipeline: path, limit: 5 })).tasks.find((task) => task.id === id);
      const seed = (listed?.request as Body | undefined)?.seed;
      if (typeof seed === 'number') update({ seed });
    } catch (error) {
      if (controller.signal.aborted) return;
      if (isRefusedKey(error)) setKeyRefusal(describeError(error));
      const cancelled = error instanceof TaskFailedError && error.message === CANCELLED_ERROR;
      update({ phase: cancelled ? 'cancelled' : 'failed', error: describeError(error), endedAt: Date.now() });
    } finally {
      if (id) setGalleryRevision((n) => n + 1);
    }
  };

  const cancel = async () => {
    if (!client || !run?.id) return;
    try {
      await client.cancel(run.pipeline, run.id);
    } catch {
      // It ended meanwhile (409): its final status arrives through the stream all the same.
    }
  };

  const sample: SampleInput = {
    apiUrl,
    path,
    statusPath: endpoint.status?.path,
    body,
    kind: endpoint.kind === 'training' ? 'training' : 'task',
  };
  const shown = fields.filter((field) => applies(endpoint, field, body, fields));
  const required = shown.filter((field) => isRequired(endpoint, field, body));
  const optional = shown.filter((field) => !isRequired(endpoint, field, body));
  const problemsFor = (name: string) => (showAllProblems || touched.has(name) ? problems[name] : undefined);
  const optionalProblems = optional.some((field) => problemsFor(field.name));
  const pending = run !== undefined && ['submitting', 'queued', 'running'].includes(run.phase);

  const renderField = (field: (typeof fields)[number]) => (
    <FieldInput
      key={`${formRevision}-${field.name}`}
      field={field}
      required={isRequired(endpoint, field, body)}
      value={values[field.name]}
      problems={problemsFor(field.name)}
      onChange={(value) => setField(field.name, value)}
      upload={client ? (files) => client.uploadImages(files) : undefined}
    />
  );

  return (
    <div className={styles.playground}>
      <section className={styles.settings} aria-labelledby="settings-heading">
        <h2 id="settings-heading" className="sr-only">
          API and key
        </h2>
        <div className={styles.field}>
          <label htmlFor="playground-api-key">API key</label>
          <input
            id="playground-api-key"
            type="password"
            autoComplete="off"
            value={apiKey}
            aria-describedby="playground-key-help"
            onChange={(event) => {
              setApiKey(event.target.value.trim());
              setKeyRefusal(undefined);
            }}
          />
          <p id="playground-key-help" className={styles.help}>
            Kept in this browser only and sent only to the API at <code>{apiUrl}</code>.
          </p>
        </div>
        {!apiKey && (
          <div className="alert alert--info" role="status" data-testid="key-missing">
            Enter your API key to run a request, upload images and see your recent tasks. The form and the
            code below work without one.
          </div>
        )}
        {apiKey && keyRefusal && (
          <div className="alert alert--danger" role="alert" data-testid="key-refused">
            The API refused this key: {keyRefusal}. Check it (keys are shown once, when they are created) and
            enter it again.
          </div>
        )}
      </section>

      <div className={styles.columns}>
        <form
          id="playground-form"
          className={styles.form}
          aria-labelledby="form-heading"
          onSubmit={(event) => {
            event.preventDefault();
            void start();
          }}
        >
          <h2 id="form-heading">Request</h2>
          <div className={styles.field}>
            <label htmlFor="playground-pipeline">Pipeline</label>
            <select
              id="playground-pipeline"
              value={path}
              aria-describedby="playground-pipeline-help"
              onChange={(event) => choosePipeline(event.target.value, exampleOf(event.target.value, apiUrl))}
            >
              {pipelineGroups().map(([tag, members]) => (
                <optgroup key={tag} label={tag}>
                  {members.map((member) => (
                    <option key={member.path} value={member.path}>
                      {member.summary} ({member.path})
                    </option>
                  ))}
                </optgroup>
              ))}
            </select>
            <p id="playground-pipeline-help" className={styles.help}>
              {notedDescription(endpoint, NOTES).split('\n\n')[0]}
            </p>
          </div>
          {required.map(renderField)}
          <details className={styles.optional} open={optionalProblems || undefined}>
            <summary>Optional fields ({optional.length})</summary>
            {optional.map(renderField)}
          </details>
          {problems.body && <p className={styles.error}>{problems.body.join('; ')}</p>}
          <div className={styles.actions}>
            <button type="submit" className="button button--primary" disabled={!client || pending}>
              Run
            </button>{' '}
            <button
              type="button"
              className="button button--secondary"
              onClick={() => choosePipeline(path, exampleOf(path, apiUrl))}
            >
              Reset to the example
            </button>
            {showAllProblems && Object.keys(problems).length > 0 && (
              <p className={styles.error} role="alert">
                The request does not validate yet: see the fields marked above.
              </p>
            )}
          </div>
        </form>

        <div className={styles.side}>
          {run ? (
            <RunView run={run} onCancel={() => void cancel()} />
          ) : (
            <section className={styles.run} aria-labelledby="run-heading">
              <h2 id="run-heading">Task</h2>
              <p>Run the request to follow its task here.</p>
            </section>
          )}
          <section aria-labelledby="copy-heading">
            <h2 id="copy-heading">Copy as</h2>
            <SampleTabs
              samples={[
                { value: 'curl', label: 'curl', language: 'bash', code: curlSample(sample) },
                { value: 'sdk', label: 'JavaScript (SDK)', language: 'ts', code: sdkSample(sample) },
                { value: 'python', label: 'Python', language: 'python', code: pythonSample(sample) },
              ]}
            />
          </section>
        </div>
      </div>

      <Gallery
        client={keyRefusal ? undefined : client}
        refresh={galleryRevision}
        imageFields={imageFields}
        onReopen={reopen}
        onUseImage={useImage}
        onRefusedKey={refused}
      />
    </div>
  );
}
