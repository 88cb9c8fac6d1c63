import fc from 'fast-check';

/** Anything at all, including values a type checker would never let through. */
export const anything = fc.anything({
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withTypedArray: true,
  withSparseArray: true,
  stringUnit: 'binary',
});

/** Strings of any UTF-16 code units: lone surrogates included. */
export const binaryString = fc.string({ unit: 'binary' });
