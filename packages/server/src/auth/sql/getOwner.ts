import type { Queryable } from '@imagegen/db';
import type { OwnerRow } from './insertOwner.ts';

export async function getOwner(db: Queryable, ownerId: string): Promise<OwnerRow | null> {
  const { rows } = await db.query<OwnerRow>({
    name: 'getOwner',
    text: 'SELECT id, name, webhook_secret, created_at FROM owners WHERE id = $1',
    values: [ownerId],
  });
  return rows[0] ?? null;
}
