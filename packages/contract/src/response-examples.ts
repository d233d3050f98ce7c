import { CANCELLED_ERROR } from './schemas/responses.ts';

/** Example answers by response schema title, for the OpenAPI document. */

const url = (name: string) => `https://api.example.com/files/${name}.png`;
const when = '2024-05-01T12:00:00Z';

const subscription = {
  user_id: 'u_123',
  subscription_id: 'sub_1',
  plan: 'EPBASIC',
  pod_id: 'gpu-1',
  pod_status: 'unknown',
  period_start: when,
  period_end: '2024-06-01T12:00:00Z',
  subscription_status: 'active',
};

export const RESPONSE_EXAMPLES: Readonly<Record<string, unknown>> = {
  AcceptedResponse: { status: 'PENDING', id: 'b0f3c1d2-6a1e-4d3f-9a57-0c2f4e8b9d10' },
  AsyncTaskSuccessResponse: { status: 'SUCCESS', download_urls: [url('out-1')], image_url: url('out-1') },
  SyncTaskSuccessResponse: {
    status: 'SUCCESS',
    download_urls: [url('out-1')],
    image_url: url('out-1'),
    image: null,
  },
  Image2PromptSuccessResponse: {
    status: 'SUCCESS',
    download_urls: null,
    prompt: 'a lighthouse on a cliff at dawn, oil painting',
  },
  LoadModelCompletedResponse: { status: 'SUCCESS', model_id: '3f2a9c1e' },
  TrainAcceptedResponse: { id: 'c7a4e2b1-0d9f-4b8e-8f1a-2b3c4d5e6f70', status: 'queued' },
  TrainSuccessResponse: { status: 'completed', model_id: '9d8e7f6a', training_duration_seconds: 612.4 },
  UploadImagesResponse: { image_urls: [url('upload-1')] },
  DeletedModel: { model_id: '3f2a9c1e', deleted: true },
  UserModelList: [
    {
      model_id: '3f2a9c1e',
      model_name: 'My watercolour LoRA',
      base_model: 'sdxl',
      model_type: 'lora',
      tags: 'watercolour,soft',
      sample_images: [url('sample')],
      verified: false,
      visibility: 'private',
    },
  ],
  UserModel: {
    user_id: 'u_123',
    model_id: '3f2a9c1e',
    model_name: 'My watercolour LoRA',
    model_url: 'https://models.example.com/watercolour.safetensors',
    pretrained_model_path: null,
    base_model: 'sdxl',
    model_type: 'lora',
    description: 'Soft watercolour style',
    tags: 'watercolour,soft',
    sample_images: [url('sample')],
    images_generated: 42,
    invocations: 17,
    trigger_words: 'wtrclr',
    trained_model: false,
    verified: false,
    nsfw: false,
    creator_link: null,
    donation_link: null,
    creation_timestamp: when,
    visibility: 'private',
  },
  UserImageList: [
    { download_url: url('out-1'), creation_timestamp: when, model_id: 'sdxl', image_id: 'img_1' },
  ],
  ImageInfo: {
    image_id: 'img_1',
    user_id: 'u_123',
    model_id: 'sdxl',
    backblaze_file_id: null,
    download_url: url('out-1'),
    json: '{"prompt": "a red fox in the snow", "width": 1024, "height": 1024}',
    creation_timestamp: when,
  },
  UserSubscription: subscription,
  UserSubscriptionList: [subscription],
  UserAccount: {
    user_id: 'u_123',
    api_key: 'ig_4f7C2a9E1b6D8f03A5c7E9b1D3f5A7c9',
    plan: 'EPBASIC',
    plan_expiry_date: '2024-06-01T12:00:00Z',
  },
  BatchTasks: {
    batch_id: 'launch-posters',
    tasks: [
      {
        id: 'b0f3c1d2-6a1e-4d3f-9a57-0c2f4e8b9d10',
        path: '/sdxl/text2image/v1',
        status: 'SUCCESS',
        download_urls: [url('out-1')],
        created_at: when,
      },
    ],
  },
  WebhookSecret: { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
  TaskList: {
    tasks: [
      {
        id: 'b0f3c1d2-6a1e-4d3f-9a57-0c2f4e8b9d10',
        pipeline: '/sdxl/text2image/v1',
        request: {
          prompt: 'a launch poster, bold type',
          negative_prompt: 'blurry',
          num_inference_steps: 20,
          samples: 1,
          width: 1024,
          height: 1024,
          batch_id: 'launch-posters',
          seed: 3141592,
        },
        state: 'succeeded',
        batch_id: 'launch-posters',
        created_at: when,
        finished_at: '2024-05-01T12:00:09Z',
        status_path: '/sdxl/text2image/v1/status/b0f3c1d2-6a1e-4d3f-9a57-0c2f4e8b9d10',
      },
    ],
    next_cursor: 'MTcxNDU2NDgwMDAwMDAwMC5iMGYzYzFkMi02YTFlLTRkM2YtOWE1Ny0wYzJmNGU4YjlkMTA',
  },
  WebhookDeliveryList: {
    deliveries: [
      {
        id: '5d1c8f0e-2b7a-4c39-9e84-31f6a0b2c7d4',
        task_id: 'b0f3c1d2-6a1e-4d3f-9a57-0c2f4e8b9d10',
        event: 'completed',
        status: 'delivered',
        created_at: '2024-05-01T12:00:09Z',
        attempts: [
          {
            attempt: 1,
            started_at: '2024-05-01T12:00:09Z',
            duration_ms: 5012,
            status_code: 503,
            error: 'receiver answered HTTP 503',
          },
          { attempt: 2, started_at: '2024-05-01T12:00:19Z', duration_ms: 84, status_code: 200, error: null },
        ],
      },
    ],
  },
  WebhookDelivery: {
    id: '5d1c8f0e-2b7a-4c39-9e84-31f6a0b2c7d4',
    task_id: 'b0f3c1d2-6a1e-4d3f-9a57-0c2f4e8b9d10',
    event: 'completed',
    status: 'pending',
    created_at: '2024-05-01T12:00:09Z',
    attempts: [
      { attempt: 1, started_at: '2024-05-01T12:00:09Z', duration_ms: 84, status_code: 200, error: null },
    ],
  },
  UsageReport: {
    from: '2024-05-01',
    to: '2024-05-02',
    rows: [
      {
        day: '2024-05-01',
        pipeline: '/sdxl/text2image/v1',
        tasks: 12,
        succeeded: 11,
        failed: 1,
        images: 22,
        pixels: 23068672,
        run_seconds: 98.4,
        queue_seconds: 6.2,
      },
    ],
  },
  TaskEventStream:
    'id: 2\ndata: {"status":"PENDING","progress":0.4,"eta_seconds":3.1}\n\n' +
    ': keep-alive\n\n' +
    'id: 4\ndata: {"status":"SUCCESS","download_urls":["https://api.example.com/files/out-1.png"]}\n\n',
  // Last: the status paths take the first success shape listed above as their example.
  TaskErrorResponse: { status: 'FAILURE', error: CANCELLED_ERROR },
  TrainFailureResponse: { status: 'failed', error: CANCELLED_ERROR },
};
