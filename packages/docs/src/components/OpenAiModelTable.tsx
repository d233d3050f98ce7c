import type { OpenAiModelTable as Table } from '@imagegen/server';
import table from '@site/.generated/openai-models.json';
import type { ReactNode } from 'react';

/**
 * The OpenAI Images API's built-in model table, as the API runs it (printed by
 * `npm run --silent openai-models` into .generated/openai-models.json at build time, never copied
 * by hand): each model, the names it also answers to, its pipelines, sizes, fields and steps.
 */

const codes = (values: readonly string[]) =>
  values.map((value, n) => (
    <span key={value}>
      {n > 0 && ', '}
      <code>{value}</code>
    </span>
  ));

export default function OpenAiModelTable(): ReactNode {
  const { default: fallback, models } = table as Table;
  return (
    <table data-openai-models>
      <thead>
        <tr>
          <th>model</th>
          <th>also answers to</th>
          <th>generations</th>
          <th>edits (no mask; mask)</th>
          <th>
            sizes (the first: <code>auto</code>)
          </th>
          <th>fields it sets</th>
          <th>steps by quality</th>
        </tr>
      </thead>
      <tbody>
        {models.map((model) => (
          <tr key={model.id}>
            <td>
              <code>{model.id}</code>
              {model.id === fallback && ' (the default)'}
            </td>
            <td>{codes(model.aliases ?? [])}</td>
            <td>
              <code>{model.generations}</code>
            </td>
            <td>{model.edits ? codes([model.edits.image ?? '—', model.edits.mask ?? '—']) : '—'}</td>
            <td>{codes(model.sizes)}</td>
            <td>{model.fields ? <code>{JSON.stringify(model.fields)}</code> : '—'}</td>
            <td>{model.steps ? codes(Object.entries(model.steps).map(([q, n]) => `${q}: ${n}`)) : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
