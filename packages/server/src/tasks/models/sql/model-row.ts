/** A models row as the record reads return it (UserModel's fields plus bookkeeping). */
export interface ModelRow {
  id: string;
  owner_id: string;
  model_id: string;
  model_name: string;
  model_url: string | null;
  pretrained_model_path: string | null;
  base_model: string;
  model_type: string;
  model_extension: string | null;
  revision: string | null;
  description: string;
  tags: string;
  sample_images: string[];
  images_generated: number;
  invocations: number;
  trigger_words: string | null;
  trained_model: boolean;
  verified: boolean;
  nsfw: boolean;
  creator_link: string | null;
  donation_link: string | null;
  visibility: 'private' | 'public';
  status: 'loading' | 'ready' | 'failed';
  task_id: string | null;
  creation_timestamp: Date;
}

export const MODEL_COLUMNS = `id, owner_id, model_id, model_name, model_url, pretrained_model_path, base_model,
  model_type, model_extension, revision, description, tags, sample_images, images_generated, invocations,
  trigger_words, trained_model, verified, nsfw, creator_link, donation_link, visibility, status, task_id,
  creation_timestamp`;
