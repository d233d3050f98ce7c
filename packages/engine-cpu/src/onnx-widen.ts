/**
 * Rewrites an ONNX model stored in float16 as float32, and drops the graph outputs nobody reads.
 *
 * imgly ships ISNet "medium" in float16. onnxruntime's CPU provider has no float16 convolution
 * on x86, so it wraps every convolution in Cast nodes; those casts, and the layout reorders they
 * force around the NCHWc convolutions, cost about a tenth of each run. Widened once at load, the
 * same weights run as a plain float32 graph (measured: 1.77 s to 1.60 s per 1024 px image on
 * 2 cores). ISNet also computes six side outputs, a training aid; onnxruntime runs every node of
 * a graph whatever the caller fetches, so the nodes that feed only unread outputs are removed here.
 *
 * The rewrite works on the protobuf wire format directly (no ONNX library ships on npm for node),
 * touching only the fields below and copying every other byte as it was.
 */

// Field numbers from onnx.proto3.
const MODEL_GRAPH = 7;
const GRAPH_NODE = 1;
const GRAPH_INITIALIZER = 5;
const GRAPH_INPUT = 11;
const GRAPH_OUTPUT = 12;
const GRAPH_VALUE_INFO = 13;
const NODE_INPUT = 1;
const NODE_OUTPUT = 2;
const NODE_OP_TYPE = 4;
const NODE_ATTRIBUTE = 5;
const ATTRIBUTE_NAME = 1;
const ATTRIBUTE_I = 3;
const ATTRIBUTE_T = 5;
const ATTRIBUTE_G = 6;
const ATTRIBUTE_TENSORS = 10;
const ATTRIBUTE_GRAPHS = 11;
const TENSOR_DATA_TYPE = 2;
const TENSOR_INT32_DATA = 5;
const TENSOR_NAME = 8;
const TENSOR_RAW_DATA = 9;
const VALUE_INFO_NAME = 1;
const VALUE_INFO_TYPE = 2;
const TYPE_TENSOR = 1;
const TENSOR_TYPE_ELEM_TYPE = 1;

const FLOAT = 1;
const FLOAT16 = 10;

const VARINT = 0;
const LENGTH_DELIMITED = 2;

/** One field of a message: for varints the encoded varint bytes, for the others the payload. */
interface Field {
  readonly no: number;
  readonly wire: number;
  bytes: Uint8Array;
}

export interface WidenOptions {
  /** Graph outputs to keep; every other output is dropped. Default: keep them all. */
  readonly keepOutputs?: readonly string[];
}

export function widenFloat16Model(model: Uint8Array, options: WidenOptions = {}): Buffer {
  const fields = decode(model);
  for (const field of fields) {
    if (field.no === MODEL_GRAPH) field.bytes = graph(field.bytes, options.keepOutputs);
  }
  return encode(fields);
}

function graph(bytes: Uint8Array, keepOutputs?: readonly string[]): Uint8Array {
  let fields = decode(bytes);
  if (keepOutputs) fields = withoutUnreadOutputs(fields, keepOutputs);
  for (const field of fields) {
    if (field.no === GRAPH_NODE) field.bytes = node(field.bytes);
    else if (field.no === GRAPH_INITIALIZER) field.bytes = tensor(field.bytes);
    else if (field.no === GRAPH_INPUT || field.no === GRAPH_OUTPUT || field.no === GRAPH_VALUE_INFO)
      field.bytes = valueInfo(field.bytes);
  }
  return encode(fields);
}

/**
 * Keeps the listed graph outputs and only the nodes they depend on, found by walking back from
 * them through each value's producer (node order is not to be trusted: float16 converters append
 * their input and output casts at the end). A graph with control flow keeps all its nodes: a
 * subgraph reads outer values its node does not list.
 */
function withoutUnreadOutputs(fields: Field[], keep: readonly string[]): Field[] {
  const outputs = fields.filter((field) => field.no === GRAPH_OUTPUT).map((f) => valueInfoName(f.bytes));
  const missing = keep.filter((name) => !outputs.includes(name));
  if (missing.length > 0) throw new Error(`the model has no output ${missing.join(', ')}`);
  const keptOutputs = fields.filter(
    (field) => field.no !== GRAPH_OUTPUT || keep.includes(valueInfoName(field.bytes)),
  );
  if (fields.some((field) => field.no === GRAPH_NODE && hasSubgraph(field.bytes))) return keptOutputs;

  const producers = new Map<string, { field: Field; inputs: string[] }>();
  for (const field of fields) {
    if (field.no !== GRAPH_NODE) continue;
    const parts = decode(field.bytes);
    const inputs = parts.filter((part) => part.no === NODE_INPUT).map((part) => text(part.bytes));
    for (const part of parts) if (part.no === NODE_OUTPUT) producers.set(text(part.bytes), { field, inputs });
  }
  const needed = new Set<string>();
  const used = new Set<Field>();
  const pending = [...keep];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (needed.has(name)) continue;
    needed.add(name);
    const producer = producers.get(name);
    if (producer && !used.has(producer.field)) {
      used.add(producer.field);
      pending.push(...producer.inputs);
    }
  }
  const dropped = new Set(
    fields
      .filter((field) => field.no === GRAPH_INITIALIZER)
      .map((field) => tensorName(field.bytes))
      .filter((name) => !needed.has(name)),
  );
  return keptOutputs.filter((field) => {
    if (field.no === GRAPH_NODE) return used.has(field);
    if (field.no === GRAPH_INITIALIZER) return !dropped.has(tensorName(field.bytes));
    // Older models also list their initializers as graph inputs.
    if (field.no === GRAPH_INPUT) return !dropped.has(valueInfoName(field.bytes));
    if (field.no === GRAPH_VALUE_INFO) return needed.has(valueInfoName(field.bytes));
    return true;
  });
}

function hasSubgraph(nodeBytes: Uint8Array): boolean {
  return decode(nodeBytes).some(
    (field) =>
      field.no === NODE_ATTRIBUTE &&
      decode(field.bytes).some((part) => part.no === ATTRIBUTE_G || part.no === ATTRIBUTE_GRAPHS),
  );
}

function node(bytes: Uint8Array): Uint8Array {
  const fields = decode(bytes);
  const opType = text(fields.find((field) => field.no === NODE_OP_TYPE)?.bytes);
  for (const field of fields) {
    if (field.no === NODE_ATTRIBUTE) field.bytes = attribute(field.bytes, opType);
  }
  return encode(fields);
}

function attribute(bytes: Uint8Array, opType: string): Uint8Array {
  const fields = decode(bytes);
  const name = text(fields.find((field) => field.no === ATTRIBUTE_NAME)?.bytes);
  for (const field of fields) {
    if (field.no === ATTRIBUTE_T || field.no === ATTRIBUTE_TENSORS) field.bytes = tensor(field.bytes);
    else if (field.no === ATTRIBUTE_G || field.no === ATTRIBUTE_GRAPHS) field.bytes = graph(field.bytes);
    else if (field.no === ATTRIBUTE_I && opType === 'Cast' && name === 'to') {
      // A Cast to float16 becomes a Cast to float32, which onnxruntime removes as a no-op.
      if (readVarint(field.bytes) === FLOAT16) field.bytes = varint(FLOAT);
    }
  }
  return encode(fields);
}

/** A float16 tensor, stored as raw_data or as int32_data, becomes float32 raw_data. */
function tensor(bytes: Uint8Array): Uint8Array {
  const fields = decode(bytes);
  const type = fields.find((field) => field.no === TENSOR_DATA_TYPE);
  if (!type || readVarint(type.bytes) !== FLOAT16) return bytes;
  type.bytes = varint(FLOAT);
  const raw = fields.find((field) => field.no === TENSOR_RAW_DATA);
  let halves: Uint16Array;
  if (raw) {
    halves = new Uint16Array(raw.bytes.length / 2);
    new Uint8Array(halves.buffer).set(raw.bytes);
  } else {
    const values: number[] = [];
    for (const field of fields.filter((f) => f.no === TENSOR_INT32_DATA)) {
      if (field.wire === VARINT) values.push(readVarint(field.bytes));
      else for (let at = 0; at < field.bytes.length; ) at = readVarintAt(field.bytes, at, values);
    }
    halves = Uint16Array.from(values);
  }
  const floats = new Float32Array(halves.length);
  const table = halfToFloat();
  for (let i = 0; i < halves.length; i++) floats[i] = table[halves[i]!]!;
  const kept = fields.filter((field) => field.no !== TENSOR_RAW_DATA && field.no !== TENSOR_INT32_DATA);
  kept.push({ no: TENSOR_RAW_DATA, wire: LENGTH_DELIMITED, bytes: new Uint8Array(floats.buffer) });
  return encode(kept);
}

function valueInfo(bytes: Uint8Array): Uint8Array {
  const fields = decode(bytes);
  for (const field of fields) {
    if (field.no !== VALUE_INFO_TYPE) continue;
    const type = decode(field.bytes);
    for (const inner of type) {
      if (inner.no !== TYPE_TENSOR) continue;
      const tensorType = decode(inner.bytes);
      for (const elem of tensorType) {
        if (elem.no === TENSOR_TYPE_ELEM_TYPE && readVarint(elem.bytes) === FLOAT16)
          elem.bytes = varint(FLOAT);
      }
      inner.bytes = encode(tensorType);
    }
    field.bytes = encode(type);
  }
  return encode(fields);
}

function tensorName(bytes: Uint8Array): string {
  return text(decode(bytes).find((field) => field.no === TENSOR_NAME)?.bytes);
}

function valueInfoName(bytes: Uint8Array): string {
  return text(decode(bytes).find((field) => field.no === VALUE_INFO_NAME)?.bytes);
}

let halfTable: Float32Array | undefined;

/** Every float16 bit pattern's float32 value (subnormals, infinities and NaNs included). */
function halfToFloat(): Float32Array {
  if (halfTable) return halfTable;
  const table = new Float32Array(65536);
  const bits = new Uint32Array(table.buffer);
  for (let h = 0; h < 65536; h++) {
    const sign = (h & 0x8000) << 16;
    const exponent = (h >> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    if (exponent === 0) table[h] = (sign ? -1 : 1) * mantissa * 2 ** -24;
    else if (exponent === 31) bits[h] = (sign | 0x7f800000 | (mantissa << 13)) >>> 0;
    else bits[h] = (sign | ((exponent + 112) << 23) | (mantissa << 13)) >>> 0;
  }
  halfTable = table;
  return table;
}

// Protobuf wire format: a message is a run of (tag varint, value) pairs.

function decode(bytes: Uint8Array): Field[] {
  const fields: Field[] = [];
  let at = 0;
  while (at < bytes.length) {
    const tags: number[] = [];
    at = readVarintAt(bytes, at, tags);
    const tag = tags[0]!;
    const no = Math.floor(tag / 8);
    const wire = tag % 8;
    const start = at;
    if (wire === VARINT) {
      while (bytes[at]! & 0x80) at++;
      at++;
      fields.push({ no, wire, bytes: bytes.subarray(start, at) });
    } else if (wire === LENGTH_DELIMITED) {
      const lengths: number[] = [];
      at = readVarintAt(bytes, at, lengths);
      fields.push({ no, wire, bytes: bytes.subarray(at, at + lengths[0]!) });
      at += lengths[0]!;
    } else if (wire === 1 || wire === 5) {
      at += wire === 1 ? 8 : 4;
      fields.push({ no, wire, bytes: bytes.subarray(start, at) });
    } else {
      throw new Error(`not an ONNX model: protobuf wire type ${wire} at byte ${start}`);
    }
    if (at > bytes.length) throw new Error('not an ONNX model: a field runs past the end');
  }
  return fields;
}

function encode(fields: readonly Field[]): Buffer {
  const parts: Uint8Array[] = [];
  for (const field of fields) {
    parts.push(varint(field.no * 8 + field.wire));
    if (field.wire === LENGTH_DELIMITED) parts.push(varint(field.bytes.length));
    parts.push(field.bytes);
  }
  return Buffer.concat(parts);
}

/** Reads one varint (below 2^53: tags, lengths, types and float16 bits) into `out`. */
function readVarintAt(bytes: Uint8Array, at: number, out: number[]): number {
  let value = 0;
  let scale = 1;
  for (;;) {
    const byte = bytes[at++];
    if (byte === undefined) throw new Error('not an ONNX model: a varint runs past the end');
    value += (byte & 0x7f) * scale;
    scale *= 128;
    if (!(byte & 0x80)) break;
  }
  out.push(value);
  return at;
}

function readVarint(bytes: Uint8Array): number {
  const out: number[] = [];
  readVarintAt(bytes, 0, out);
  return out[0]!;
}

function varint(value: number): Uint8Array {
  const out: number[] = [];
  do {
    let byte = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    out.push(byte);
  } while (value > 0);
  return Uint8Array.from(out);
}

function text(bytes: Uint8Array | undefined): string {
  return bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8') : '';
}
