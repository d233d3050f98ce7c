import type { Queryable } from '@imagegen/db';

/** Revokes the owner's unrevoked keys whose prefix starts with `prefix` (all of them for ''). */
export async function revokeApiKeys(db: Queryable, ownerId: string, prefix: string): Promise<number> {
  const result = await db.query({
    name: 'revokeApiKeys',
    text: `UPDATE api_keys SET revoked_at = now()
            WHERE owner_id = $1 AND revoked_at IS NULL AND prefix LIKE $2 || '%'`,
    values: [ownerId, prefix],
  });
  return result.rowCount ?? 0;
}
