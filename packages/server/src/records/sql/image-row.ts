export interface ImageRow {
  id: string;
  owner_id: string;
  task_id: string | null;
  model_id: string | null;
  blob_key: string;
  download_url: string;
  json: Record<string, unknown>;
  creation_timestamp: Date;
}

export const IMAGE_COLUMNS =
  'id, owner_id, task_id, model_id, blob_key, download_url, json, creation_timestamp';
