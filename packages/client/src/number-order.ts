/**
 * The order of two number literal types, worked out by the compiler from their decimal texts
 * (`${-0.35}` is "-0.35"): lengths of the integer parts first, then digit by digit, the fractions
 * digit by digit, the signs last. The work grows with the number of digits, not with the size of
 * the number (4294967296 costs what 4 does), and no tuple is counted up to a value.
 *
 * `Order<A, B>` is 'lt', 'eq' or 'gt'; it is never for anything it cannot tell: `number` (a
 * variable) or a number that prints in exponent form (1e21, 1e-7).
 */
export type Order<A extends number, B extends number> =
  Decimal<A> extends infer X extends string
    ? Decimal<B> extends infer Y extends string
      ? SignedOrder<X, Y>
      : never
    : never;

/**
 * The integer part of a number literal, as the API reads a float sent for an int field (2.9 is 2,
 * -0.5 is 0); `number` and exponent forms stay as they are.
 */
export type Truncated<N extends number> = N extends unknown
  ? Decimal<N> extends `${infer Whole}.${string}`
    ? Whole extends '-0'
      ? 0
      : Parse<Whole>
    : N
  : never;

type Parse<T extends string> = T extends `${infer N extends number}` ? N : never;

/** The decimal text of a literal, or never for `number`, unions aside, and exponent forms. */
type Decimal<N extends number> = number extends N
  ? never
  : `${N}` extends infer T extends string
    ? T extends `${string}e${string}`
      ? never
      : T
    : never;

type SignedOrder<X extends string, Y extends string> = X extends `-${infer A}`
  ? Y extends `-${infer B}`
    ? Reversed<UnsignedOrder<A, B>>
    : 'lt'
  : Y extends `-${string}`
    ? 'gt'
    : UnsignedOrder<X, Y>;

type Reversed<O> = O extends 'lt' ? 'gt' : O extends 'gt' ? 'lt' : O;

type UnsignedOrder<X extends string, Y extends string> = Then<
  WholeOrder<WholePart<X>, WholePart<Y>>,
  DigitOrder<FractionPart<X>, FractionPart<Y>>
>;

type WholePart<T extends string> = T extends `${infer Whole}.${string}` ? Whole : T;
type FractionPart<T extends string> = T extends `${string}.${infer Fraction}` ? Fraction : '';

/** The first order unless it is 'eq'. */
type Then<First, Second> = First extends 'eq' ? Second : First;

/** Whole parts have no leading zeros: the longer is the larger; of equal lengths, the first digit that differs. */
type WholeOrder<A extends string, B extends string> = Then<LengthOrder<A, B>, DigitOrder<A, B>>;

type LengthOrder<A extends string, B extends string> = A extends `${string}${infer RestA}`
  ? B extends `${string}${infer RestB}`
    ? LengthOrder<RestA, RestB>
    : 'gt'
  : B extends ''
    ? 'eq'
    : 'lt';

/**
 * Digit by digit from the left, a missing digit read as 0: whole parts of one length, or
 * fractions of any lengths (a literal's fraction has no trailing zero).
 */
type DigitOrder<A extends string, B extends string> = A extends `${infer D extends Digit}${infer RestA}`
  ? B extends `${infer E extends Digit}${infer RestB}`
    ? D extends E
      ? DigitOrder<RestA, RestB>
      : D extends Below[E]
        ? 'lt'
        : 'gt'
    : D extends '0'
      ? DigitOrder<RestA, ''>
      : 'gt'
  : B extends ''
    ? 'eq'
    : B extends `0${infer RestB}`
      ? DigitOrder<'', RestB>
      : 'lt';

type Digit = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9';

/** The digits below each digit. */
interface Below {
  '0': never;
  '1': '0';
  '2': '0' | '1';
  '3': '0' | '1' | '2';
  '4': '0' | '1' | '2' | '3';
  '5': '0' | '1' | '2' | '3' | '4';
  '6': '0' | '1' | '2' | '3' | '4' | '5';
  '7': '0' | '1' | '2' | '3' | '4' | '5' | '6';
  '8': '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7';
  '9': '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8';
}
