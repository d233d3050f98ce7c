import { type Queryable, toStored } from '@imagegen/db';

export async function deleteServer(db: Queryable, id: string): Promise<boolean> {
  const result = await db.query({
    name: 'deleteServer',
    text: 'DELETE FROM servers WHERE id = $1',
    values: [toStored(id)],
  });
  return (result.rowCount ?? 0) > 0;
}
