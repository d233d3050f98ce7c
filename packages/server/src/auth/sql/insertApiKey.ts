import type { Queryable } from '@imagegen/db';

export async function insertApiKey(
  db: Queryable,
  key: { ownerId: string; keyHash: Buffer; prefix: string },
): Promise<{ id: string }> {
  const { rows } = await db.query<{ id: string }>({
    name: 'insertApiKey',
    text: 'INSERT INTO api_keys (owner_id, key_hash, prefix) VALUES ($1, $2, $3) RETURNING id',
    values: [key.ownerId, key.keyHash, key.prefix],
  });
  return rows[0]!;
}
