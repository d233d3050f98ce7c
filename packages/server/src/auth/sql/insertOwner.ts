import type { Queryable } from '@imagegen/db';

export interface OwnerRow {
  id: string;
  name: string;
  webhook_secret: string;
  created_at: Date;
}

export async function insertOwner(
  db: Queryable,
  owner: { name: string; webhookSecret: string },
): Promise<OwnerRow> {
  const { rows } = await db.query<OwnerRow>({
    name: 'insertOwner',
    text: 'INSERT INTO owners (name, webhook_secret) VALUES ($1, $2) RETURNING id, name, webhook_secret, created_at',
    values: [owner.name, owner.webhookSecret],
  });
  return rows[0]!;
}
