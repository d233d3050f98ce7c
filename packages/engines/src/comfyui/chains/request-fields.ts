import { endpointByPath } from '@imagegen/contract';
import { EngineInputError, type Pipeline } from '../../engine.ts';
import type { CompileContext, Refusal } from '../contracts.ts';

/** Refusal reasons by field (as `refuseUnlessDefault` takes them) as `requires.refuses` lists them. */
export function refusals(reasons: Readonly<Record<string, string>>): Refusal[] {
  return Object.entries(reasons).map(([field, why]) => ({ field, why }));
}

/**
 * The validated request of one pipeline, read by name. The contract already checked types and
 * bounds and filled defaults; what is left here is the rule that no field that changes the picture
 * is silently ignored: a compiler either maps a field to the graph or refuses it (EngineInputError
 * naming the field) when it is set to anything but its default.
 */
export class RequestFields {
  private readonly defaults: Readonly<Record<string, unknown>>;

  constructor(
    readonly pipeline: Pipeline,
    private readonly ctx: CompileContext,
  ) {
    const properties = (
      endpointByPath(pipeline)?.request as { properties?: Record<string, { default?: unknown }> }
    )?.properties;
    if (!properties) throw new Error(`${pipeline} is not a request endpoint of the contract`);
    this.defaults = Object.fromEntries(
      Object.entries(properties).map(([name, schema]) => [name, schema.default]),
    );
  }

  get input(): Readonly<Record<string, unknown>> {
    return this.ctx.input;
  }

  /** The owner's models the request names, resolved by the worker (see user-models.ts). */
  get models(): CompileContext['models'] {
    return this.ctx.models;
  }

  number(name: string): number {
    return this.ctx.input[name] as number;
  }

  optionalNumber(name: string): number | undefined {
    return (this.ctx.input[name] ?? undefined) as number | undefined;
  }

  string(name: string): string {
    return (this.ctx.input[name] ?? '') as string;
  }

  bool(name: string): boolean {
    return this.ctx.input[name] === true;
  }

  /** A list field; absent and null read as an empty list. */
  list<T>(name: string): readonly T[] {
    return (this.ctx.input[name] ?? []) as readonly T[];
  }

  /** Whether the field holds its default: absent, null, the schema's default, or false / [] where it has none. */
  isDefault(name: string): boolean {
    const value = this.ctx.input[name];
    if (value === undefined || value === null) return true;
    const fallback = this.defaults[name];
    if (fallback !== undefined) return JSON.stringify(value) === JSON.stringify(fallback);
    return value === false || (Array.isArray(value) && value.length === 0);
  }

  /** Fails the task, naming the field and why the graph cannot honour its value. */
  refuse(name: string, why: string): never {
    throw new EngineInputError(`${name}: ${why}`);
  }

  /** Refuses each named field that is set to anything but its default. */
  refuseUnlessDefault(fields: Readonly<Record<string, string>>): void {
    for (const [name, why] of Object.entries(fields)) {
      if (!this.isDefault(name)) this.refuse(name, why);
    }
  }

  /** The name the ComfyUI server gave the uploaded image of a request field. */
  image(name: string): string {
    const uploaded = this.ctx.images[name];
    if (typeof uploaded !== 'string')
      throw new Error(`${this.pipeline}: the image of ${name} was not uploaded`);
    return uploaded;
  }

  /** The uploaded images of a list field, in request order. */
  images(name: string): readonly string[] {
    const uploaded = this.ctx.images[name] ?? [];
    return typeof uploaded === 'string' ? [uploaded] : uploaded;
  }

  has(name: string): boolean {
    return !this.isDefault(name);
  }
}
