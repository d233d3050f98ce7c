import { describe, expect, it } from 'vitest';
import { appliesTo, requestSchemas } from './request-schemas.ts';
import { BOUNDS, type BoundRow } from './spec-tables.ts';

/** One case per edge of every bound of the API reference, for every schema the row applies to. */
interface Edge {
  value: number;
  ok: boolean;
  type?: string;
  msg?: string;
  limit?: number;
}

function edges(row: BoundRow, integer: boolean): Edge[] {
  const step = integer ? 1 : 0.01;
  const round = (n: number) => Math.round(n * 1000) / 1000;
  const out: Edge[] = [];
  if (row.gt !== undefined) {
    out.push({ value: row.gt, ok: false, type: 'not_gt', msg: `greater than ${row.gt}`, limit: row.gt });
    out.push({ value: round(row.gt + step), ok: true });
  }
  if (row.ge !== undefined) {
    out.push({ value: row.ge, ok: true });
    out.push({
      value: round(row.ge - step),
      ok: false,
      type: 'not_ge',
      msg: `greater than or equal to ${row.ge}`,
      limit: row.ge,
    });
  }
  if (row.lt !== undefined) {
    out.push({ value: row.lt, ok: false, type: 'not_lt', msg: `less than ${row.lt}`, limit: row.lt });
    out.push({ value: round(row.lt - step), ok: true });
  }
  if (row.le !== undefined) {
    out.push({ value: row.le, ok: true });
    out.push({
      value: round(row.le + step),
      ok: false,
      type: 'not_le',
      msg: `less than or equal to ${row.le}`,
      limit: row.le,
    });
  }
  return out;
}

function isInteger(schema: Record<string, unknown>, each: boolean | undefined): boolean {
  const target = (each ? schema.items : schema) as Record<string, unknown> | undefined;
  if (target?.type) return target.type === 'integer';
  const branches = (schema.anyOf as Record<string, unknown>[] | undefined) ?? [];
  return branches.some((b) => (each ? (b.items as Record<string, unknown>)?.type : b.type) === 'integer');
}

const cases = requestSchemas.flatMap((request) =>
  BOUNDS.filter((row) => request.schema.properties[row.field] && appliesTo(row, request.name)).flatMap(
    (row) =>
      edges(row, isInteger(request.schema.properties[row.field]!, row.each)).map((edge) => ({
        request,
        row,
        edge,
      })),
  ),
);

describe("the API reference's bounds", () => {
  it('covers every row of the bounds table in at least one schema', () => {
    for (const row of BOUNDS) {
      expect(
        cases.some((c) => c.row === row),
        `${row.field} ${JSON.stringify(row.only ?? 'all')}`,
      ).toBe(true);
    }
  });

  it.each(
    cases.map((c) => [c.request.name, c.row.field, c.edge.value, c.edge.ok ? 'accepts' : 'rejects', c]),
  )('%s.%s = %s %s', (_name, field, value, _verdict, { request, row, edge }) => {
    const body = { ...request.example, [field]: row.each ? [value] : value };
    const result = request.validate(body);
    if (edge.ok) {
      expect(result).toMatchObject({ ok: true });
      return;
    }
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.detail).toEqual([
      {
        loc: row.each ? ['body', field, 0] : ['body', field],
        msg: `ensure this value is ${edge.msg}`,
        type: `value_error.number.${edge.type}`,
        ctx: { limit_value: edge.limit },
      },
    ]);
  });
});
