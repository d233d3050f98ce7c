// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are TypeScript source shown to readers
/**
 * Request examples in curl, TypeScript, Python, with the TypeScript SDK (`@imagegen/client`) and
 * with the `imagegen` command, written from the operation's example body so they always match the
 * contract. They target the API URL of the site's configuration (the local `npm start` API by
 * default) and read the key from IMAGEGEN_API_KEY.
 */

export type SampleKind = 'task' | 'training' | 'upload' | 'read';

export interface SampleInput {
  apiUrl: string;
  path: string;
  statusPath?: string;
  body?: Record<string, unknown>;
  kind: SampleKind;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function pyLiteral(value: unknown, indent = ''): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  const inner = `${indent}    `;
  if (Array.isArray(value)) return `[${value.map((v) => pyLiteral(v, indent)).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).map(
    ([k, v]) => `${inner}${JSON.stringify(k)}: ${pyLiteral(v, inner)},`,
  );
  return `{\n${entries.join('\n')}\n${indent}}`;
}

function statusWithId(statusPath: string, expression: (name: string) => string): string {
  return statusPath.replace(/\{(\w+)\}/, (_, name: string) => expression(name));
}

function doneStates(kind: SampleKind): { ok: string; failed: string; result: string } {
  return kind === 'training'
    ? { ok: 'completed', failed: 'failed', result: 'model_id' }
    : { ok: 'SUCCESS', failed: 'FAILURE', result: 'download_urls' };
}

export function curlSample({ apiUrl, path, statusPath, body, kind }: SampleInput): string {
  if (kind === 'upload') {
    return [
      `curl -s ${apiUrl}${path} \\`,
      `  -H "API-Key: $IMAGEGEN_API_KEY" \\`,
      `  -F image_files=@first.png \\`,
      `  -F image_files=@second.jpg`,
    ].join('\n');
  }
  if (kind === 'read') return `curl -s ${apiUrl}${path} \\\n  -H "API-Key: $IMAGEGEN_API_KEY"`;
  const idField = kind === 'training' ? 'id' : 'id';
  const lines = [
    `# Submit: answers {"status": ..., "${idField}": "..."}`,
    `curl -s ${apiUrl}${path} \\`,
    `  -H "API-Key: $IMAGEGEN_API_KEY" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d ${shellQuote(JSON.stringify(body ?? {}, null, 2))}`,
  ];
  if (statusPath) {
    lines.push(
      '',
      '# Poll with the id it returned until the status is final',
      `curl -s ${apiUrl}${statusWithId(statusPath, () => '$TASK_ID')} \\`,
      `  -H "API-Key: $IMAGEGEN_API_KEY"`,
    );
  }
  return lines.join('\n');
}

export function typescriptSample({ apiUrl, path, statusPath, body, kind }: SampleInput): string {
  const head = [
    '// Node 20+, an ES module (top-level await): save as sample.mts, run `npx tsx sample.mts`.',
    `const API = '${apiUrl}';`,
    `const key = process.env.IMAGEGEN_API_KEY ?? '';`,
    '',
  ];
  if (kind === 'upload') {
    return [
      head[0],
      `import { readFile } from 'node:fs/promises';`,
      '',
      ...head.slice(1),
      'const form = new FormData();',
      `for (const file of ['first.png', 'second.jpg']) {`,
      `  form.append('image_files', new Blob([await readFile(file)]), file);`,
      '}',
      `const res = await fetch(\`\${API}${path}\`, { method: 'POST', headers: { 'API-Key': key }, body: form });`,
      'if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);',
      'const { image_urls } = await res.json();',
      'console.log(image_urls);',
    ].join('\n');
  }
  if (kind === 'read') {
    return [
      ...head,
      `const res = await fetch(\`\${API}${path}\`, { headers: { 'API-Key': key } });`,
      'if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);',
      'console.log(await res.json());',
    ].join('\n');
  }
  const done = doneStates(kind);
  const lines = [
    ...head,
    `const headers = { 'API-Key': key, 'Content-Type': 'application/json' };`,
    `const body = ${JSON.stringify(body ?? {}, null, 2)};`,
    '',
    `const submitted = await fetch(\`\${API}${path}\`, { method: 'POST', headers, body: JSON.stringify(body) });`,
    '// 422 answers {detail: [{loc, msg, type}]}: fix the named field, do not retry as is.',
    'if (!submitted.ok) throw new Error(`${submitted.status}: ${await submitted.text()}`);',
    'const { id } = await submitted.json();',
  ];
  if (statusPath) {
    lines.push(
      '',
      'const deadline = Date.now() + 10 * 60_000;',
      'while (Date.now() < deadline) {',
      `  const res = await fetch(\`\${API}${statusWithId(statusPath, () => '${id}')}\`, { headers });`,
      '  const task = await res.json();',
      `  if (task.status === '${done.ok}') {`,
      `    console.log(task.${done.result});`,
      '    break;',
      '  }',
      `  if (task.status === '${done.failed}') throw new Error(task.error);`,
      '  await new Promise((resolve) => setTimeout(resolve, 2000));',
      '}',
    );
  }
  return lines.join('\n');
}

export function pythonSample({ apiUrl, path, statusPath, body, kind }: SampleInput): string {
  if (kind === 'upload') {
    return [
      '# pip install requests',
      'import os',
      'import requests',
      '',
      `API = "${apiUrl}"`,
      'headers = {"API-Key": os.environ["IMAGEGEN_API_KEY"]}',
      'files = [("image_files", open(name, "rb")) for name in ["first.png", "second.jpg"]]',
      `res = requests.post(f"{API}${path}", headers=headers, files=files, timeout=60)`,
      'res.raise_for_status()',
      'print(res.json()["image_urls"])',
    ].join('\n');
  }
  const head = [
    'import json',
    'import os',
    ...(statusPath ? ['import time'] : []),
    'import urllib.request',
    '',
    `API = "${apiUrl}"`,
    'KEY = os.environ["IMAGEGEN_API_KEY"]',
    '',
    '',
    'def call(method, path, body=None):',
    '    data = None if body is None else json.dumps(body).encode()',
    '    req = urllib.request.Request(API + path, data=data, method=method,',
    '                                 headers={"API-Key": KEY, "Content-Type": "application/json"})',
    '    # urlopen raises HTTPError on 4xx/5xx: a 422 body lists the invalid fields in "detail"',
    '    with urllib.request.urlopen(req, timeout=30) as res:',
    '        return json.load(res)',
    '',
    '',
  ];
  if (kind === 'read') return [...head, `print(call("GET", "${path}"))`].join('\n');
  const done = doneStates(kind);
  const lines = [...head, `task = call("POST", "${path}", ${pyLiteral(body ?? {})})`];
  if (statusPath) {
    lines.push(
      '',
      'deadline = time.time() + 600',
      'while time.time() < deadline:',
      `    status = call("GET", f"${statusWithId(statusPath, () => "{task['id']}")}")`,
      `    if status["status"] == "${done.ok}":`,
      `        print(status["${done.result}"])`,
      '        break',
      `    if status["status"] == "${done.failed}":`,
      '        raise RuntimeError(status["error"])',
      '    time.sleep(2)',
    );
  }
  return lines.join('\n');
}

/** The object literal of `value`, indented as the SDK sample's body. */
function tsLiteral(value: unknown, indent = ''): string {
  if (Array.isArray(value)) return `[${value.map((item) => tsLiteral(item, indent)).join(', ')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  const inner = `${indent}  `;
  const entries = Object.entries(value as Record<string, unknown>).map(
    ([key, item]) =>
      `${inner}${/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key)}: ${tsLiteral(item, inner)},`,
  );
  return entries.length === 0 ? '{}' : `{\n${entries.join('\n')}\n${indent}}`;
}

/** `{ model_id: 'MODEL_ID' }`: a read's path parameters, to fill in. */
function paramsOf(path: string): string | undefined {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  if (names.length === 0) return undefined;
  return `{ params: { ${names.map((name) => `${name}: '${name.toUpperCase()}'`).join(', ')} } }`;
}

export function sdkSample({ apiUrl, path, body, kind }: SampleInput): string {
  const head = [
    '// Node 20+ (or a browser, an edge runtime), an ES module: see Client libraries for @imagegen/client.',
    "import { createClient } from '@imagegen/client';",
  ];
  const client = [
    '',
    '// The key comes from IMAGEGEN_API_KEY (or pass apiKey).',
    `const client = createClient({ baseUrl: '${apiUrl}' });`,
  ];
  if (kind === 'upload') {
    return [
      ...head,
      "import { uploadFiles } from '@imagegen/client/node';",
      ...client,
      '',
      "// Answers the images' URLs, in order, to use in other requests.",
      "const urls = await uploadFiles(client, ['first.png', 'second.jpg']);",
      'console.log(urls);',
    ].join('\n');
  }
  if (kind === 'read') {
    const params = paramsOf(path);
    const call = params ? `client.get('${path}', ${params})` : `client.get('${path}')`;
    return [...head, ...client, '', `console.log(await ${call});`].join('\n');
  }
  return [
    ...head,
    ...client,
    '',
    '// Submits, follows the task (its status stream), and answers its final status: the body is',
    '// typed from the contract, so a wrong field or value is a compile-time error.',
    `const result = await client.run('${path}', ${tsLiteral(body ?? {})}, {`,
    '  timeoutMs: 10 * 60_000,',
    '  onProgress: (status) => console.error(status),',
    '});',
    'console.log(result);',
  ].join('\n');
}

/** `sd/text2image` for `/sd/text2image/v1`: a pipeline's name on the command line. */
function pipelineName(path: string): string {
  return path.replace(/^\//, '').replace(/\/v1$/, '');
}

/** `--num-inference-steps 20`: the flags of one field (a list repeats its flag). */
function flagsOf(name: string, value: unknown): string[] {
  const flag = `--${name.replaceAll('_', '-')}`;
  if (value === true) return [flag];
  if (value === false) return [`--no-${flag.slice(2)}`];
  if (Array.isArray(value)) return value.flatMap((item) => flagsOf(name, item));
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return [`${flag} ${/^[\w.:/@-]+$/.test(text) ? text : shellQuote(text)}`];
}

export function cliSample({ apiUrl, path, body }: SampleInput): string {
  const flags = Object.entries(body ?? {}).flatMap(([name, value]) => flagsOf(name, value));
  return [
    `export IMAGEGEN_BASE_URL=${apiUrl}   # and IMAGEGEN_API_KEY`,
    '# Submits, shows the progress, saves the outputs (a local file may stand for an image URL).',
    [`imagegen run ${pipelineName(path)}`, ...flags, '--out ./outputs'].join(' \\\n  '),
  ].join('\n');
}
