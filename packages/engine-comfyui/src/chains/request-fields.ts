import { endpointByPath, type RequestOf, type RequestPath } from '@imagegen/contract';
import { EngineInputError, type Pipeline } from '@imagegen/engines';
import type { CompileContext, Refusal } from '../contracts.ts';

/**
 * Reasons by field (as `refuseUnlessDefault` and `ignoreUnlessDefault` take them) as
 * `requires.refuses` and `requires.ignores` list them.
 */
export function refusals(reasons: Readonly<Record<string, string>>): Refusal[] {
  return Object.entries(reasons).map(([field, why]) => ({ field, why }));
}

/**
 * A request as a compiler reads it: every field of its schema, by name. A field the schema marks
 * optional is there too, typed `| undefined`, so a chain's interface that requires a field only
 * fits the requests whose schema has it. (Mapping the keys through Extract, rather than `keyof R`
 * alone, is what keeps them required.)
 */
export type Fields<R> = { readonly [K in Extract<keyof R, string>]: R[K] };

/** The request of a pipeline of the contract, as its compiler reads it. */
export type FieldsOf<P extends RequestPath> = Fields<RequestOf<P>>;

/** A field's value when it is set: null and absent read as its default. */
type Sent<V> = Exclude<V, null | undefined>;

/** The names of T's fields whose set values are of type V: what an accessor of V may read. */
export type NamesOf<T, V> = { [K in keyof T]-?: Sent<T[K]> extends V ? K : never }[keyof T] & string;

type ItemOf<V> = Sent<V> extends readonly (infer I)[] ? I : never;

/**
 * The pipelines a chain's interface I fits: their request has each field I requires, of I's type
 * or a narrower one (an optional field of I is one some of them lack).
 */
export type PipelinesReading<I> = { [P in RequestPath]: FieldsOf<P> extends I ? P : never }[RequestPath];

/**
 * The validated request of one pipeline, read by name. The contract already checked types and
 * bounds and filled defaults; what is left here is the rule that no field that changes the picture
 * is silently ignored: a compiler maps a field to the graph, or, when it is set to anything but its
 * default, refuses it (EngineInputError naming the field) or, where the original service's own
 * pipeline took no notice of it in that case, notes it for the task's status.
 *
 * T is the request's type (`FieldsOf<pipeline>`, or a chain's interface of the fields it reads): a
 * name the request lacks, or an accessor of another type than the field's, fails to compile.
 */
// A request with more fields, or narrower ones, reads as any interface it satisfies: it has every
// name of each type that the interface has. The checker cannot follow that through the conditional
// name types, so the annotation is taken on trust; the type test holds both directions to it.
// @ts-expect-error TS2636: covariance of T is not provable through NamesOf.
export class RequestFields<out T extends object> {
  private readonly defaults: Readonly<Record<string, unknown>>;

  constructor(
    readonly pipeline: Pipeline,
    private readonly ctx: RequestContext,
  ) {
    const properties = (
      endpointByPath(pipeline)?.request as { properties?: Record<string, { default?: unknown }> }
    )?.properties;
    if (!properties) throw new Error(`${pipeline} is not a request endpoint of the contract`);
    this.defaults = Object.fromEntries(
      Object.entries(properties).map(([name, schema]) => [name, schema.default]),
    );
  }

  get input(): T {
    return this.ctx.input as T;
  }

  /** The owner's models the request names, resolved by the worker (see user-models.ts). */
  get models(): CompileContext['models'] {
    return this.ctx.models;
  }

  number(name: NamesOf<T, number>): number {
    return this.ctx.input[name] as number;
  }

  optionalNumber(name: NamesOf<T, number>): number | undefined {
    return (this.ctx.input[name] ?? undefined) as number | undefined;
  }

  string(name: NamesOf<T, string>): string {
    return (this.ctx.input[name] ?? '') as string;
  }

  bool(name: NamesOf<T, boolean>): boolean {
    return this.ctx.input[name] === true;
  }

  /** A list field; absent and null read as an empty list. */
  list<K extends NamesOf<T, readonly unknown[]>>(name: K): readonly ItemOf<T[K]>[] {
    return (this.ctx.input[name] ?? []) as readonly ItemOf<T[K]>[];
  }

  /** Whether the field holds its default: absent, null, the schema's default, or false / [] where it has none. */
  isDefault(name: keyof T & string): boolean {
    const value = this.ctx.input[name];
    if (value === undefined || value === null) return true;
    const fallback = this.defaults[name];
    if (fallback !== undefined) return JSON.stringify(value) === JSON.stringify(fallback);
    return value === false || (Array.isArray(value) && value.length === 0);
  }

  /** Fails the task, naming the field and why the graph cannot honour its value. */
  refuse(name: keyof T & string, why: string): never {
    throw new EngineInputError(`${name}: ${why}`);
  }

  /** Refuses each named field that is set to anything but its default. */
  refuseUnlessDefault<K extends keyof T & string>(fields: Readonly<Partial<Record<K, string>>>): void {
    for (const [name, why] of Object.entries(fields) as [K, string][]) {
      if (!this.isDefault(name)) this.refuse(name, why);
    }
  }

  /**
   * Notes each named field that is set to anything but its default, where the graph takes no
   * notice of it as the original service's own pipeline took none: the task runs, and its notes
   * say `<field>: <why>` (the same words as `requires.ignores`).
   */
  ignoreUnlessDefault<K extends keyof T & string>(
    w: { note(text: string): void },
    fields: Readonly<Partial<Record<K, string>>>,
  ): void {
    for (const [name, why] of Object.entries(fields) as [K, string][]) {
      if (!this.isDefault(name)) w.note(`${name}: ${why}`);
    }
  }

  /** The name the ComfyUI server gave the uploaded image of a request field. */
  image(name: NamesOf<T, string>): string {
    const uploaded = this.ctx.images?.[name];
    if (typeof uploaded !== 'string')
      throw new Error(`${this.pipeline}: the image of ${name} was not uploaded`);
    return uploaded;
  }

  /** The uploaded images of a list field, in request order. */
  images(name: NamesOf<T, string | readonly string[]>): readonly string[] {
    const uploaded = this.ctx.images?.[name] ?? [];
    return typeof uploaded === 'string' ? [uploaded] : uploaded;
  }

  has(name: keyof T & string): boolean {
    return !this.isDefault(name);
  }
}

/** The field names of a pipeline's request schema. */
export function requestFieldNames(pipeline: Pipeline): string[] {
  const properties = (endpointByPath(pipeline)?.request as { properties?: Record<string, unknown> })
    ?.properties;
  if (!properties) throw new Error(`${pipeline} is not a request endpoint of the contract`);
  return Object.keys(properties);
}

/**
 * What a request is read from: the validated input, and where a graph is compiled, its uploaded
 * pictures and the owner's models (a submission check has neither).
 */
export type RequestContext = Pick<CompileContext, 'input'> &
  Partial<Pick<CompileContext, 'images' | 'models'>>;

/** The fields of a pipeline's request, typed by its schema in the contract. */
export function requestFields<P extends RequestPath>(
  pipeline: P,
  ctx: RequestContext,
): RequestFields<FieldsOf<P>> {
  return new RequestFields(pipeline, ctx);
}
