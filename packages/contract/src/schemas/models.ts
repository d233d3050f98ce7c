import Type from 'typebox';
import {
  BaseModel,
  Bool,
  CommonFields,
  Enum,
  HttpUrl,
  ImageUrlList,
  Int,
  Nullable,
  Visibility,
} from './common.ts';

/** Custom models: load (upload), sync to an enterprise server, train; and the upload body. */

const opt = Type.Optional;

const LOAD_MODEL_TYPES = ['lora', 'checkpoint', 'embedding'] as const;
export const MODEL_TYPES = ['lora', 'controlnet', 'checkpoint', 'embedding', 'adapter'] as const;
const REVISIONS = ['fp16', 'fp32'] as const;
const MODEL_EXTENSIONS = ['safetensors', 'ckpt'] as const;
/** Model types whose load needs `revision`. */
const TYPES_NEEDING_REVISION = ['checkpoint', 'controlnet'] as const;

/** JSON Schema if/then: `field` is required when the body matches `condition`. */
function requiredWhen(condition: Record<string, unknown>, field: string) {
  // biome-ignore lint/suspicious/noThenProperty: `then` is the JSON Schema keyword, not a thenable.
  return { if: condition, then: { required: [field] } };
}

export const LoadModelPrompt = Type.Object(
  {
    model_name: Type.String(),
    pretrained_model_path: Nullable(Type.String({ description: 'Hub-style path of the model, or null.' })),
    model_url: Nullable(HttpUrl, { description: 'http(s) URL of the model file, or null.' }),
    base_model: BaseModel,
    model_type: Enum(LOAD_MODEL_TYPES),
    description: Type.String(),
    sample_images: ImageUrlList(),
    visibility: Visibility,
    model_extension: opt(Enum(MODEL_EXTENSIONS, { description: 'Required when model_url is given.' })),
    revision: opt(Enum(REVISIONS, { description: 'Required for checkpoint and controlnet models.' })),
    trigger_words: opt(Type.String()),
    tags: opt(Type.String({ description: 'Comma-separated tags.' })),
    nsfw: opt(Bool(false)),
    server_id: CommonFields.server_id,
    webhook: CommonFields.webhook,
    webhook_events_filter: CommonFields.webhook_events_filter,
  },
  {
    title: 'LoadModelPrompt',
    allOf: [
      requiredWhen(
        { properties: { model_url: { type: 'string' } }, required: ['model_url'] },
        'model_extension',
      ),
      requiredWhen(
        { properties: { model_type: { enum: [...TYPES_NEEDING_REVISION] } }, required: ['model_type'] },
        'revision',
      ),
    ],
  },
);

export const SyncModelPrompt = Type.Object(
  {
    model_id: Type.String(),
    server_id: CommonFields.server_id,
    webhook: CommonFields.webhook,
    webhook_events_filter: CommonFields.webhook_events_filter,
  },
  { title: 'SyncModelPrompt', description: "Copies one of the owner's models onto an enterprise server." },
);

export const TrainModelPrompt = Type.Object(
  {
    model_name: Type.String(),
    base_model: BaseModel,
    max_train_steps: Int({ gt: 0, le: 300 }),
    validation_prompt: Type.String(),
    instance_prompt: Type.String(),
    images: ImageUrlList('Training photos.'),
    description: Type.String(),
    visibility: Visibility,
    trigger_words: opt(Type.String()),
    tags: opt(Type.String({ description: 'Comma-separated tags.' })),
    nsfw: opt(Bool(false)),
    webhook: CommonFields.webhook,
    webhook_events_filter: CommonFields.webhook_events_filter,
  },
  { title: 'TrainModelPrompt' },
);

export const UploadImagesBody = Type.Object(
  {
    image_files: Type.Array(Type.String({ format: 'binary' }), { minItems: 1 }),
  },
  { title: 'Body_upload_images', description: 'multipart/form-data: one `image_files` part per image.' },
);
