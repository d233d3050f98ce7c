/**
 * ComfyUI's refusal of a prompt (`POST /prompt` 400, or 200 with non-empty `node_errors`) in plain
 * words for the task's owner: which node, which input, what is wrong, on which server. Never a
 * JSON dump.
 */

interface ErrorItem {
  readonly type?: string;
  readonly message?: string;
  readonly details?: string;
  readonly extra_info?: {
    readonly input_name?: string;
    readonly input_config?: readonly [unknown, Record<string, unknown>?] | null;
    readonly received_value?: unknown;
    readonly received_type?: string;
    readonly linked_node?: readonly [string, number];
    readonly exception_message?: string;
    readonly exception_type?: string;
    readonly class_type?: string;
    readonly node_id?: string;
  };
}

interface NodeErrors {
  readonly errors?: readonly ErrorItem[];
  readonly class_type?: string;
}

export interface RejectionBody {
  readonly error?: ErrorItem | string;
  readonly node_errors?: Readonly<Record<string, NodeErrors>>;
}

/** What a model-file input holds, for `unknown checkpoint 'x'` rather than `ckpt_name 'x'`. */
const MODEL_INPUTS: Readonly<Record<string, string>> = {
  ckpt_name: 'checkpoint',
  lora_name: 'LoRA',
  control_net_name: 'ControlNet model',
  vae_name: 'VAE',
  unet_name: 'diffusion model',
  clip_name: 'text encoder',
  clip_name1: 'text encoder',
  clip_name2: 'text encoder',
  clip_name3: 'text encoder',
  clip_name4: 'text encoder',
  style_model_name: 'style model',
  gligen_name: 'GLIGEN model',
  hypernetwork_name: 'hypernetwork',
  photomaker_model_name: 'PhotoMaker model',
};

/** Model inputs whose name depends on the node (UpscaleModelLoader's `model_name`, LoadImage's `image`). */
const NODE_MODEL_INPUTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  UpscaleModelLoader: { model_name: 'upscale model' },
  CLIPVisionLoader: { clip_name: 'CLIP vision model' },
  LoadImage: { image: 'input image' },
  LoadImageMask: { image: 'input image' },
};

/** What a model input holds (`checkpoint`, `LoRA`…), or undefined when it holds no model. */
export function modelKind(classType: string, input: string): string | undefined {
  return NODE_MODEL_INPUTS[classType]?.[input] ?? MODEL_INPUTS[input];
}

export function describeRejection(body: RejectionBody, server: string): string {
  const where = `on server ${server}`;
  const nodeSentences = Object.entries(body.node_errors ?? {}).flatMap(([id, node]) =>
    (node.errors ?? []).map((item) => describeNodeError(id, node.class_type ?? 'node', item)),
  );
  if (nodeSentences.length > 0) return `${nodeSentences.join('; ')} ${where}`;

  const error = typeof body.error === 'string' ? { message: body.error } : (body.error ?? {});
  switch (error.type) {
    case 'no_prompt':
      return `the request carried no graph ${where}`;
    case 'prompt_no_outputs':
      return `the graph has no output node ${where}`;
    case 'missing_node_type': {
      const info = error.extra_info ?? {};
      return `node type '${info.class_type ?? '?'}' (node ${info.node_id ?? '?'}) is not installed ${where}`;
    }
    case 'invalid_prompt': {
      // "Cannot execute because node X does not exist." / "…a node is missing the class_type property."
      const node = /Node ID '#([^']*)'/.exec(error.details ?? '')?.[1];
      const missingType = /node (.+) does not exist/.exec(error.message ?? '')?.[1];
      if (missingType) return `node type '${missingType}' (node ${node ?? '?'}) is not installed ${where}`;
      if (/missing the class_type/.test(error.message ?? ''))
        return `node ${node ?? '?'} has no class_type ${where}`;
      break;
    }
  }
  const text = [error.message, error.details].filter((part) => part && part.length > 0).join(': ');
  return `the prompt was refused (${text || 'no reason given'}) ${where}`;
}

function describeNodeError(id: string, classType: string, item: ErrorItem): string {
  const info = item.extra_info ?? {};
  const input = info.input_name ?? item.details ?? '?';
  const node = `${classType} (node ${id})`;
  const config = info.input_config?.[1] ?? {};
  const value = show(info.received_value);
  switch (item.type) {
    case 'value_not_in_list': {
      const kind = modelKind(classType, input);
      if (kind) return `unknown ${kind} ${value}`;
      return `${node}: ${input} ${value} is not one of the allowed values`;
    }
    case 'required_input_missing':
      return `${node}: the required input ${input} is missing`;
    case 'value_smaller_than_min':
      return `${node}: ${input} ${value} is below the minimum ${bound(config.min, item.message, 'min')}`;
    case 'value_bigger_than_max':
      return `${node}: ${input} ${value} is above the maximum ${bound(config.max, item.message, 'max')}`;
    case 'invalid_input_type':
      return `${node}: ${input} ${value} is not a valid ${String(info.input_config?.[0] ?? 'value')}`;
    case 'return_type_mismatch': {
      const wanted = String(info.input_config?.[0] ?? '?');
      const link = info.linked_node ? ` (node ${info.linked_node[0]} output ${info.linked_node[1]})` : '';
      return `${node}: ${input} takes ${wanted} but is linked to a ${info.received_type ?? '?'} output${link}`;
    }
    case 'custom_validation_failed':
      // details: "image - Invalid image file: x.png" (the input, then the node's own reason)
      return `${node}: ${item.details?.split(' - ').slice(1).join(' - ') || `${input} is not valid`}`;
    case 'exception_during_inner_validation':
      if (info.exception_type === 'KeyError') {
        // Python's KeyError names the missing node id ('99'). ComfyUI's input_name here is not
        // reliably the input that holds the link, so it is left out.
        const missing = String(info.exception_message ?? item.details).replace(/^'(.*)'$/, '$1');
        return `${node}: an input is linked to node ${missing}, which is not in the graph`;
      }
      break;
  }
  const reason = [item.message, item.details].filter((part) => part && part.length > 0).join(': ');
  return `${node}: ${reason || 'refused'}`;
}

/** A bound from the input's declaration, else from ComfyUI's message ("Value 0 smaller than min of 1"). */
function bound(declared: unknown, message: string | undefined, which: 'min' | 'max'): string {
  if (typeof declared === 'number') return String(declared);
  return new RegExp(`${which} of (\\S+)`).exec(message ?? '')?.[1] ?? '?';
}

function show(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? 'undefined');
}
