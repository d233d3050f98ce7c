import type { Queryable } from '@imagegen/db';

/** Any number of the app's own, distinct from the migrations' lock. */
const FIRST_OWNER_LOCK = 7_315_202;

/**
 * Holds, until the transaction ends, the lock under which a first start looks for owners and
 * makes the default one: processes starting together on an empty database make one owner.
 * Answers whether an owner exists already.
 */
export async function lockFirstOwner(db: Queryable): Promise<boolean> {
  await db.query({
    name: 'lockFirstOwner',
    text: 'SELECT pg_advisory_xact_lock($1)',
    values: [FIRST_OWNER_LOCK],
  });
  // A statement of its own: a statement's snapshot is taken when it starts, so one that also
  // waited for the lock would not see the owner that the holder committed meanwhile.
  const { rows } = await db.query<{ exists: boolean }>({
    name: 'anyOwnerExists',
    text: 'SELECT EXISTS (SELECT 1 FROM owners) AS exists',
  });
  return rows[0]!.exists;
}
