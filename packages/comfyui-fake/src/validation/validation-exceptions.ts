/**
 * Some malformed graphs make ComfyUI's validation raise instead of report (a link to a node that
 * is not in the graph, a node without `inputs`). ComfyUI catches the exception one level up and
 * sends it back with its Python traceback, so the error body holds source lines of the server's
 * `execution.py`. The texts below are those lines as ComfyUI 0.3.64 (Python 3.13) prints them,
 * under the install path of the recorded server; every caught exception has exactly two frames
 * (the `await` that called the failing validation, and the line that raised), because each
 * recursive call is wrapped in its own try.
 */

const SOURCE = '/opt/comfy/ComfyUI/execution.py';

function frame(line: number, fn: string, code: string, indent: number, carets: string): string {
  return `  File "${SOURCE}", line ${line}, in ${fn}\n    ${code}\n    ${' '.repeat(indent)}${carets}\n`;
}

/** Where validation raises, as a traceback frame. */
export const RAISED_AT = {
  /** `inputs = prompt[unique_id]['inputs']`: a node without `inputs`. */
  inputsLookup: frame(
    730,
    'validate_inputs',
    "inputs = prompt[unique_id]['inputs']",
    9,
    `${'~'.repeat(17)}${'^'.repeat(10)}`,
  ),
  /** `if x not in inputs:`: `inputs` that is neither an object nor a list. */
  inputsMembership: frame(757, 'validate_inputs', 'if x not in inputs:', 3, '^'.repeat(15)),
  /** `val = inputs[x]`: `inputs` given as a list or a string. */
  inputValue: frame(770, 'validate_inputs', 'val = inputs[x]', 6, `${'~'.repeat(6)}${'^'.repeat(3)}`),
  /** `o_class_type = prompt[o_id]['class_type']`: a link to a node that is not in the graph. */
  linkedNode: frame(
    788,
    'validate_inputs',
    "o_class_type = prompt[o_id]['class_type']",
    15,
    `${'~'.repeat(6)}${'^'.repeat(6)}`,
  ),
  /** `received_type = r[val[1]]`: a link to an output slot the node does not have. */
  linkedSlot: frame(790, 'validate_inputs', 'received_type = r[val[1]]', 16, `~${'^'.repeat(8)}`),
} as const;

/** The `await` that called the failing validation, in its caller. */
export const CAUGHT_AT = {
  /** A node validating one of its linked inputs. */
  innerNode: frame(
    808,
    'validate_inputs',
    'r = await validate_inputs(prompt_id, prompt, o_id, validated)',
    4,
    '^'.repeat(57),
  ),
  /** validate_prompt validating an output node. */
  outputNode: frame(
    1010,
    'validate_prompt',
    'm = await validate_inputs(prompt_id, prompt, o, validated)',
    4,
    '^'.repeat(54),
  ),
} as const;

/** A Python exception raised inside a node's validation, with the frame that raised it. */
export class ValidationException extends Error {
  constructor(
    /** The exception's class (all builtins here, so the bare name as `full_type_name` gives it). */
    readonly pythonType: string,
    /** `str(exception)`. */
    message: string,
    readonly raisedAt: string,
  ) {
    super(message);
  }

  traceback(caughtAt: string): string[] {
    return [caughtAt, this.raisedAt];
  }
}
