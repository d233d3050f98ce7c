import type { Order, Truncated } from './number-order.ts';
import type { QueryBoundsOf, QueryOf, ReadPath, RequestBoundsOf, RequestOf, TaskPath } from './types.ts';

/**
 * A request body checked against its path's bounds at compile time. A call's body is typed as
 * itself (`const B`, each number a literal type), constrained to `CheckedRequestOf<P, B>`: the
 * request type, where each field whose literal in `B` is out of the field's bounds takes instead
 * a message, e.g. `"samples must be <= 4"`, that the compiler's error shows. A value of type
 * `number` is not checked (the API's 422 answers it at run time), nor a number in exponent form.
 * An int field is checked as the API reads it: 4.5 is 4.
 */
export type CheckedRequestOf<P extends TaskPath, B> = [P] extends [OnePath<P>]
  ? CheckedRequest<RequestOf<P>, RequestBoundsOf<P>, B>
  : RequestOf<P>;

/**
 * A read path's query checked as a body is: `tasks({ limit: 500 })` fails to compile with
 * `"limit must be <= 100"`. `Query` is the query type the call takes (the path's, or a part of it).
 */
export type CheckedQueryOf<P extends ReadPath, Q, Query = QueryOf<P>> = CheckedRequest<
  Query,
  QueryBoundsOf<P>,
  Q
>;

/**
 * `P` when it is one path; never when it is a union of paths (a path known only at run time),
 * whose body is checked against the union of their request types as it is written. Not a
 * conditional over `P` itself: the compiler would then work out the check for every path of the
 * contract each time it reads the constraint of a call's body.
 */
type OnePath<P> = (P extends unknown ? (path: P) => void : never) extends (path: infer One) => void
  ? One
  : never;

/** Only in types: the key that a body with a field its request does not have would need. */
declare const UNKNOWN_FIELDS: unique symbol;

type CheckedRequest<Request, Bounds, B> = WithMessages<Request, Misfits<Bounds, B>> &
  // A body typed as itself passes a field the request lacks: the constraint then asks for a key
  // no body has, and the compiler checks the literal against the request type and names the field.
  ([Exclude<keyof B, keyof Request>] extends [never]
    ? unknown
    : { readonly [UNKNOWN_FIELDS]: Exclude<keyof B, keyof Request> });

/** The request type, or, when some field's literal is out of bounds, that field's message in its place. */
type WithMessages<Request, M> = [M[keyof M]] extends [never]
  ? Request
  : { [K in keyof Request]: K extends keyof M ? ([M[K]] extends [never] ? Request[K] : M[K]) : Request[K] };

/** For each bounded field `B` sets: the message of its literal, or never. */
type Misfits<Bounds, B> = { [K in keyof Bounds & keyof B]: FieldMisfit<K & string, B[K], Bounds[K]> };

interface NumberBounds {
  readonly kind: 'integer' | 'number';
  readonly items?: true;
}

type FieldMisfit<Field extends string, V, L> = L extends { items: true }
  ? V extends readonly (infer Item)[]
    ? Misfit<`${Field} items`, Item, L>
    : never
  : Misfit<Field, V, L>;

type Misfit<Name extends string, V, L> = V extends number
  ? L extends NumberBounds
    ? Outside<Name, L['kind'] extends 'integer' ? Truncated<V> : V, L>
    : never
  : never;

/** The message of each bound `V` fails. */
type Outside<Name extends string, V extends number, L> =
  | (L extends { gt: infer M extends number }
      ? Fails<Order<V, M>, 'lt' | 'eq', `${Name} must be > ${M}`>
      : never)
  | (L extends { ge: infer M extends number } ? Fails<Order<V, M>, 'lt', `${Name} must be >= ${M}`> : never)
  | (L extends { lt: infer M extends number }
      ? Fails<Order<V, M>, 'gt' | 'eq', `${Name} must be < ${M}`>
      : never)
  | (L extends { le: infer M extends number } ? Fails<Order<V, M>, 'gt', `${Name} must be <= ${M}`> : never);

/** `Message` when the order is one of `Failing`; never when it is, or when the order is unknown. */
type Fails<O, Failing, Message> = O extends Failing ? Message : never;
