import type { Queryable } from '@imagegen/db';

/** The owner made first (on an empty database, the default one `npm start` makes), or null. */
export async function getFirstOwner(db: Queryable): Promise<{ id: string; name: string } | null> {
  const { rows } = await db.query<{ id: string; name: string }>({
    name: 'getFirstOwner',
    text: 'SELECT id, name FROM owners ORDER BY created_at, id LIMIT 1',
    values: [],
  });
  return rows[0] ?? null;
}
