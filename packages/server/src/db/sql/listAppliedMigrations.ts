import { fromStored, type Queryable } from '@imagegen/db';

export interface AppliedMigration {
  name: string;
  applied_at: Date;
}

/** The migrations this database has applied, in their numbered order. */
export async function listAppliedMigrations(db: Queryable): Promise<AppliedMigration[]> {
  const { rows } = await db.query<AppliedMigration>({
    name: 'listAppliedMigrations',
    text: 'SELECT name, applied_at FROM schema_migrations ORDER BY name',
    values: [],
  });
  return fromStored(rows);
}
