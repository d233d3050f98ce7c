/**
 * ComfyUI 0.3.64's `POST /prompt` validation (server.py `post_prompt`, execution.py
 * `validate_prompt` and `validate_inputs`), reproduced against a recorded `/object_info`: the same
 * status and the same error bodies, so a graph the real server refuses fails our tests the same way,
 * and the fake server answers as the real one does.
 *
 * Where Python's order is a set's (inputs of a node, output nodes), this follows the node
 * definition's `input_order` and the graph's key order; JSON.parse puts integer-like node ids in
 * ascending order, so "first offending node" means the lowest id.
 */
import type { ApiPrompt, InputSpec, NodeDefinition, ObjectInfo } from '@imagegen/engine-comfyui/engine';
import {
  type PyNumber,
  PythonError,
  pyBool,
  pyEquals,
  pyFloat,
  pyInt,
  pyNumberStr,
  pyRepr,
  pyStr,
  pyTypeName,
} from './python-values.ts';
import { CAUGHT_AT, RAISED_AT, ValidationException } from './validation-exceptions.ts';

/** One error as ComfyUI writes it (top-level `error` or one of a node's `errors`). */
export interface PromptError {
  readonly type: string;
  readonly message: string;
  readonly details: string;
  readonly extra_info: Readonly<Record<string, unknown>>;
}

/** `node_errors[id]`: a node's own errors and the output nodes that depend on it. */
export interface NodeErrors {
  readonly errors: readonly PromptError[];
  readonly dependent_outputs: string[];
  readonly class_type: string;
}

export interface PromptErrorBody {
  readonly error: PromptError;
  readonly node_errors: Readonly<Record<string, NodeErrors>>;
}

/** The text aiohttp answers with when a handler raises (a body that is not JSON, or not a dict). */
export const SERVER_ERROR_TEXT = '500 Internal Server Error\n\nServer got itself in trouble';

export type PromptValidation =
  /**
   * Accepted. `nodeErrors` is not always empty: when at least one output node validates, ComfyUI
   * queues the prompt and reports the failed ones here (and never runs them).
   */
  | {
      readonly status: 200;
      readonly nodeErrors: Readonly<Record<string, NodeErrors>>;
      /** The output nodes that will run, in graph order. */
      readonly outputs: readonly string[];
      /** The graph as ComfyUI queues it: widget values converted to their declared types. */
      readonly prompt: ApiPrompt;
    }
  | { readonly status: 400; readonly body: PromptErrorBody }
  /** The server raised outside validation; the body is plain text. */
  | { readonly status: 500; readonly body: string };

export interface ValidateOptions {
  /**
   * Whether a LoadImage file exists on the server (after its `[input]`/`[output]`/`[temp]`
   * annotation is taken off). By default a file exists when the node's own COMBO lists it, as
   * `/object_info` lists the input folder.
   */
  readonly fileExists?: (
    name: string,
    folder: 'input' | 'output' | 'temp',
    listed: readonly unknown[],
  ) => boolean;
}

const SERVER_ERROR = { status: 500, body: SERVER_ERROR_TEXT } as const;

/** Python raised something validation does not catch: the server answers 500. */
class Unhandled extends Error {}

/** `POST /prompt` with a parsed JSON body. */
export function validatePrompt(
  objectInfo: ObjectInfo,
  body: unknown,
  options: ValidateOptions = {},
): PromptValidation {
  try {
    return postPrompt(objectInfo, body, options);
  } catch (error) {
    if (error instanceof Unhandled) return SERVER_ERROR;
    throw error;
  }
}

function postPrompt(objectInfo: ObjectInfo, body: unknown, options: ValidateOptions): PromptValidation {
  if (pyContains(body, 'number')) {
    try {
      pyFloat(pySubscript(body, 'number'));
    } catch {
      throw new Unhandled();
    }
  }
  if (!pyContains(body, 'prompt')) {
    const error = {
      type: 'no_prompt',
      message: 'No prompt provided',
      details: 'No prompt provided',
      extra_info: {},
    };
    return { status: 400, body: { error, node_errors: {} } };
  }
  pySubscript(body, 'prompt');
  const json = body as Record<string, unknown>;
  const targets = 'partial_execution_targets' in json ? json['partial_execution_targets'] : null;
  const result = new PromptValidator(objectInfo, json['prompt'], targets, options).run();
  // After validation the handler files client_id into extra_data, which must then be a dict.
  if ('client_id' in json && 'extra_data' in json && !isDict(json['extra_data'])) throw new Unhandled();
  return result;
}

interface Outcome {
  readonly valid: boolean;
  readonly errors: readonly PromptError[];
}

/** VALIDATE_INPUTS of the core nodes that have one: it replaces the list check of its inputs. */
const CUSTOM_VALIDATION: Readonly<Record<string, readonly string[]>> = {
  LoadImage: ['image'],
  LoadImageMask: ['image'],
  LoadImageOutput: ['image'],
};

class PromptValidator {
  private readonly prompt: Record<string, Record<string, unknown>>;
  private readonly validated = new Map<string, Outcome>();
  private readonly inProgress = new Set<string>();

  constructor(
    private readonly objectInfo: ObjectInfo,
    prompt: unknown,
    private readonly targets: unknown,
    private readonly options: ValidateOptions,
  ) {
    // Python iterates a list or string graph and fails on its first member: an empty one has no outputs.
    if (!isDict(prompt) && !((Array.isArray(prompt) || typeof prompt === 'string') && prompt.length === 0)) {
      throw new Unhandled();
    }
    // ComfyUI converts widget values in place and queues the converted graph: work on a copy.
    this.prompt = isDict(prompt) ? structuredClone(prompt as Record<string, Record<string, unknown>>) : {};
  }

  run(): PromptValidation {
    const outputs: string[] = [];
    for (const [id, node] of Object.entries(this.prompt)) {
      if (!pyContains(node, 'class_type')) {
        return invalidPrompt('Cannot execute because a node is missing the class_type property.', id);
      }
      const classType = pySubscript(node, 'class_type');
      if (Array.isArray(classType) || isDict(classType)) throw new Unhandled(); // unhashable
      const definition = this.definition(classType);
      if (!definition)
        return invalidPrompt(`Cannot execute because node ${pyStr(classType)} does not exist.`, id);
      if (definition.output_node === true && (this.targets === null || pyContains(this.targets, id)))
        outputs.push(id);
    }
    if (outputs.length === 0)
      return {
        status: 400,
        body: { error: topError('prompt_no_outputs', 'Prompt has no outputs', ''), node_errors: {} },
      };

    const good: string[] = [];
    const failed: { output: string; reasons: readonly PromptError[] }[] = [];
    const nodeErrors: Record<string, NodeErrors> = {};
    for (const output of outputs) {
      let outcome: Outcome;
      try {
        outcome = this.validateInputs(output);
      } catch (error) {
        if (!(error instanceof ValidationException)) throw error;
        outcome = { valid: false, errors: [exceptionDuringValidation(error)] };
        this.validated.set(output, outcome);
      }
      if (outcome.valid) {
        good.push(output);
        continue;
      }
      failed.push({ output, reasons: outcome.errors });
      // As ComfyUI does: every failed node validated so far (for this output or an earlier one)
      // counts this output among its dependents.
      for (const [id, result] of this.validated) {
        if (result.valid || result.errors.length === 0) continue;
        nodeErrors[id] ??= {
          errors: result.errors,
          dependent_outputs: [],
          class_type: String(this.prompt[id]!['class_type']),
        };
        nodeErrors[id].dependent_outputs.push(output);
      }
    }
    if (good.length === 0) {
      const details = failed.flatMap((f) => f.reasons.map((r) => `${r.message}: ${r.details}`)).join('\n');
      const error = topError('prompt_outputs_failed_validation', 'Prompt outputs failed validation', details);
      return { status: 400, body: { error, node_errors: nodeErrors } };
    }
    // Every node was checked for a class_type above, and each output's inputs validated.
    return { status: 200, nodeErrors, outputs: good, prompt: this.prompt as unknown as ApiPrompt };
  }

  private definition(classType: unknown): NodeDefinition | undefined {
    return typeof classType === 'string' && Object.hasOwn(this.objectInfo, classType)
      ? this.objectInfo[classType]
      : undefined;
  }

  /** execution.py `validate_inputs`: one node, recursing into the nodes its links come from. */
  private validateInputs(id: string): Outcome {
    const cached = this.validated.get(id);
    if (cached) return cached;
    // Python recurses round a cycle until its recursion limit; this stops at the first repeat.
    if (this.inProgress.has(id)) {
      throw new ValidationException(
        'RecursionError',
        'maximum recursion depth exceeded',
        CAUGHT_AT.innerNode,
      );
    }
    this.inProgress.add(id);
    try {
      return this.validateNode(id);
    } finally {
      this.inProgress.delete(id);
    }
  }

  private validateNode(id: string): Outcome {
    const node = this.prompt[id]!;
    if (!('inputs' in node)) throw new ValidationException('KeyError', "'inputs'", RAISED_AT.inputsLookup);
    const inputs = node['inputs'];
    const classType = node['class_type'] as string;
    const definition = this.definition(classType)!;
    const customInputs = CUSTOM_VALIDATION[classType] ?? [];
    const errors: PromptError[] = [];
    let valid = true;

    for (const name of inputNames(definition)) {
      const [inputType, category, extraInfo] = inputInfo(definition, name);
      if (!pyContains(inputs, name, RAISED_AT.inputsMembership)) {
        if (category === 'required') {
          errors.push({
            type: 'required_input_missing',
            message: 'Required input is missing',
            details: name,
            extra_info: { input_name: name },
          });
        }
        continue;
      }
      if (!isDict(inputs)) {
        // A list or a string: `in` answered, `inputs[x]` takes no str key.
        const message = Array.isArray(inputs)
          ? 'list indices must be integers or slices, not str'
          : "string indices must be integers, not 'str'";
        throw new ValidationException('TypeError', message, RAISED_AT.inputValue);
      }
      const record = inputs;
      let value = record[name];
      const info = [inputType, extraInfo];
      if (Array.isArray(value)) {
        const link = this.checkLink(name, value, inputType, info);
        if (link.error) errors.push(link.error);
        if (!link.valid) valid = false;
        continue;
      }
      // A list widget value travels wrapped as {"__value__": [...]}, lists being links.
      if (isDict(value) && '__value__' in value) {
        value = value['__value__'];
        record[name] = value;
      }
      let number: PyNumber | undefined;
      try {
        const converted = convert(inputType, value);
        if (converted !== undefined) {
          value = converted.value;
          number = converted.number;
          record[name] = value;
        }
      } catch (error) {
        if (!(error instanceof PythonError)) throw error;
        errors.push({
          type: 'invalid_input_type',
          message: `Failed to convert an input value to a ${inputType} value`,
          details: `${name}, ${pyStr(value)}, ${error.message}`,
          extra_info: {
            input_name: name,
            input_config: info,
            received_value: value,
            exception_message: error.message,
          },
        });
        continue;
      }
      if (customInputs.includes(name)) continue;
      const error = checkWidget(name, value, number, inputType, extraInfo, info);
      if (error) errors.push(error);
    }

    errors.push(...this.customValidation(customInputs, inputs, definition));
    const outcome = errors.length > 0 || !valid ? { valid: false, errors } : { valid: true, errors: [] };
    this.validated.set(id, outcome);
    return outcome;
  }

  /** A linked input: the source node exists, its output has the input's type, and it validates. */
  private checkLink(
    name: string,
    link: unknown[],
    inputType: InputSpec[0],
    info: unknown[],
  ): { valid: boolean; error?: PromptError } {
    if (link.length !== 2) {
      const error = {
        type: 'bad_linked_input',
        message: 'Bad linked input, must be a length-2 list of [node_id, slot_index]',
        details: name,
        extra_info: { input_name: name, input_config: info, received_value: link },
      };
      return { valid: true, error };
    }
    const [sourceId, slot] = link;
    const source = this.sourceNode(sourceId);
    const receivedType = outputType(this.definition(source['class_type'])!, slot);
    if (!typesMatch(receivedType, inputType)) {
      const error = {
        type: 'return_type_mismatch',
        message: 'Return type mismatch between linked nodes',
        details: `${name}, received_type(${pyStr(receivedType)}) mismatch input_type(${pyStr(inputType)})`,
        extra_info: { input_name: name, input_config: info, received_type: receivedType, linked_node: link },
      };
      return { valid: true, error };
    }
    const id = sourceId as string;
    try {
      return { valid: this.validateInputs(id).valid };
    } catch (error) {
      if (!(error instanceof ValidationException)) throw error;
      const reasons = [
        {
          type: 'exception_during_inner_validation',
          message: 'Exception when validating inner node',
          details: error.message,
          extra_info: {
            input_name: name,
            input_config: info,
            exception_message: error.message,
            exception_type: error.pythonType,
            traceback: error.traceback(CAUGHT_AT.innerNode),
            linked_node: link,
          },
        },
      ];
      this.validated.set(id, { valid: false, errors: reasons });
      return { valid: false };
    }
  }

  /** `prompt[o_id]`: raises in the linking node's validation when the id is not a node of the graph. */
  private sourceNode(id: unknown): Record<string, unknown> {
    if (Array.isArray(id) || isDict(id)) {
      throw new ValidationException(
        'TypeError',
        `unhashable type: '${pyTypeName(id)}'`,
        RAISED_AT.linkedNode,
      );
    }
    if (typeof id !== 'string' || !Object.hasOwn(this.prompt, id)) {
      throw new ValidationException('KeyError', pyRepr(id), RAISED_AT.linkedNode);
    }
    return this.prompt[id]!;
  }

  private customValidation(
    customInputs: readonly string[],
    inputs: unknown,
    definition: NodeDefinition,
  ): PromptError[] {
    const present = customInputs.filter((name) => isDict(inputs) && name in inputs);
    const failures: PromptError[] = [];
    for (const name of present) {
      const value = (inputs as Record<string, unknown>)[name];
      if (this.imageExists(value, inputInfo(definition, name)[0])) continue;
      failures.push({
        type: 'custom_validation_failed',
        message: 'Custom validation failed for node',
        // VALIDATE_INPUTS answers "Invalid image file: <name>" and ComfyUI puts it after the input's name.
        details: `${name} - Invalid image file: ${pyStr(value)}`,
        extra_info: { input_name: name },
      });
    }
    return failures;
  }

  /** folder_paths.exists_annotated_filepath. */
  private imageExists(value: unknown, listed: InputSpec[0]): boolean {
    const name = pyStr(value);
    const folders = [
      [' [output]', 'output'],
      [' [input]', 'input'],
      [' [temp]', 'temp'],
    ] as const;
    const annotated = folders.find(([suffix]) => name.endsWith(suffix.slice(1)));
    // annotated_filepath cuts one character more than the annotation: the space before it.
    const file = annotated ? name.slice(0, -annotated[0].length) : name;
    const folder = annotated ? annotated[1] : 'input';
    const list = Array.isArray(listed) ? listed : [];
    return this.options.fileExists
      ? this.options.fileExists(file, folder, list)
      : folder === 'input' && list.includes(file);
  }
}

function topError(type: string, message: string, details: string): PromptError {
  return { type, message, details, extra_info: {} };
}

function invalidPrompt(message: string, id: string): PromptValidation {
  return {
    status: 400,
    body: { error: topError('invalid_prompt', message, `Node ID '#${id}'`), node_errors: {} },
  };
}

function exceptionDuringValidation(error: ValidationException): PromptError {
  return {
    type: 'exception_during_validation',
    message: 'Exception when validating node',
    details: error.message,
    extra_info: { exception_type: error.pythonType, traceback: error.traceback(CAUGHT_AT.outputNode) },
  };
}

/** The node's required then optional inputs, in declaration order. */
function inputNames(definition: NodeDefinition): string[] {
  const names = new Set<string>();
  for (const category of ['required', 'optional'] as const) {
    const declared = definition.input[category] ?? {};
    for (const name of definition.input_order?.[category] ?? Object.keys(declared)) names.add(name);
    for (const name of Object.keys(declared)) names.add(name);
  }
  return [...names];
}

/** comfy_execution.graph `get_input_info`: type, category and options of one input. */
function inputInfo(
  definition: NodeDefinition,
  name: string,
): [InputSpec[0], 'required' | 'optional', Readonly<Record<string, unknown>>] {
  const required = definition.input.required ?? {};
  const category = Object.hasOwn(required, name) ? 'required' : 'optional';
  const spec = (category === 'required' ? required : (definition.input.optional ?? {}))[name]!;
  return [spec[0], category, spec[1] ?? {}];
}

/** `RETURN_TYPES[slot]`: a tuple for classic nodes, a list for the newer (v3) ones. */
function outputType(definition: NodeDefinition, slot: unknown): string | readonly string[] {
  const sequence = 'api_node' in definition ? 'list' : 'tuple';
  const types = definition.output;
  if (typeof slot !== 'number' && typeof slot !== 'boolean') {
    const error = `${sequence} indices must be integers or slices, not ${pyTypeName(slot)}`;
    throw new ValidationException('TypeError', error, RAISED_AT.linkedSlot);
  }
  const index = Number(slot);
  if (!Number.isInteger(index)) {
    throw new ValidationException(
      'TypeError',
      `${sequence} indices must be integers or slices, not float`,
      RAISED_AT.linkedSlot,
    );
  }
  const type = types[index < 0 ? types.length + index : index];
  if (type === undefined)
    throw new ValidationException('IndexError', `${sequence} index out of range`, RAISED_AT.linkedSlot);
  return type;
}

/**
 * comfy_execution.validation `validate_node_input`: equal, or comma-separated type lists that
 * overlap. `*` (`IO.ANY`, whose `__ne__` is never true) takes any type, as PreviewAny's `source`.
 */
function typesMatch(received: unknown, expected: unknown): boolean {
  if (received === '*' || expected === '*') return true;
  if (pyEquals(received, expected)) return true;
  if (typeof received !== 'string' || typeof expected !== 'string') return false;
  const wanted = new Set(expected.split(',').map((t) => t.trim()));
  return received.split(',').some((t) => wanted.has(t.trim()));
}

/** The widget conversions of validate_inputs; undefined for types it leaves as they are. */
function convert(inputType: InputSpec[0], value: unknown): { value: unknown; number?: PyNumber } | undefined {
  switch (inputType) {
    case 'INT': {
      const n = pyInt(value);
      return { value: n, number: { value: n, float: false } };
    }
    case 'FLOAT': {
      const n = pyFloat(value);
      return { value: n, number: { value: n, float: true } };
    }
    case 'STRING':
      return { value: pyStr(value) };
    case 'BOOLEAN':
      return { value: pyBool(value) };
    default:
      return undefined;
  }
}

/** Bounds, then the allowed values of a COMBO given as a list (v3 `COMBO` inputs are not checked). */
function checkWidget(
  name: string,
  value: unknown,
  number: PyNumber | undefined,
  inputType: InputSpec[0],
  extraInfo: Readonly<Record<string, unknown>>,
  info: unknown[],
): PromptError | undefined {
  if (number) {
    // A bound is printed as Python holds it: a FLOAT input's bounds are floats in the core nodes.
    const bound = (key: 'min' | 'max') =>
      pyNumberStr({ value: extraInfo[key] as number, float: number.float });
    const extra_info = { input_name: name, input_config: info, received_value: value };
    if (typeof extraInfo['min'] === 'number' && number.value < extraInfo['min']) {
      const message = `Value ${pyNumberStr(number)} smaller than min of ${bound('min')}`;
      return { type: 'value_smaller_than_min', message, details: name, extra_info };
    }
    if (typeof extraInfo['max'] === 'number' && number.value > extraInfo['max']) {
      const message = `Value ${pyNumberStr(number)} bigger than max of ${bound('max')}`;
      return { type: 'value_bigger_than_max', message, details: name, extra_info };
    }
  }
  if (!Array.isArray(inputType) || inputType.some((option) => pyEquals(option, value))) return undefined;
  // ComfyUI does not send back long lists (model folders can hold thousands of files).
  const long = inputType.length > 20;
  const listInfo = long ? `(list of length ${inputType.length})` : pyStr(inputType);
  return {
    type: 'value_not_in_list',
    message: 'Value not in list',
    details: `${name}: '${pyStr(value)}' not in ${listInfo}`,
    extra_info: { input_name: name, input_config: long ? null : info, received_value: value },
  };
}

function isDict(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Python's `key in container`: a dict's keys, a list's members, a string's substrings; anything
 * else raises (a TypeError the caller either reports from `raisedAt` or lets through as a 500).
 */
function pyContains(container: unknown, key: string, raisedAt?: string): boolean {
  if (isDict(container)) return Object.hasOwn(container, key);
  if (Array.isArray(container)) return container.some((member) => pyEquals(member, key));
  if (typeof container === 'string') return container.includes(key);
  if (raisedAt) {
    const message = `argument of type '${pyTypeName(container)}' is not iterable`;
    throw new ValidationException('TypeError', message, raisedAt);
  }
  throw new Unhandled();
}

/** Python's `container[key]` with a str key: only a dict has one. */
function pySubscript(container: unknown, key: string): unknown {
  if (!isDict(container)) throw new Unhandled();
  return container[key];
}
