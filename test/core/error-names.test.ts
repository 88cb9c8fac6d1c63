import { describe, expect, expectTypeOf, it } from 'vitest';
import type { APIError, APIErrorName, BillingErrorClasses, BillingErrorName } from '../../src/index.js';
import * as sdk from '../../src/index.js';

// Every error name has its class in one table, `BillingErrorClasses`: the union of names and the
// HTTP subset (listed in core/errors/names.ts) must equal what the table gives, and the package
// exports every class of core/errors/. These checks keep each class's `name` and `brand` in step
// with its key there.
describe('error names: one table', () => {
  it('derives the names of the HTTP-status classes from the table', () => {
    expectTypeOf<APIErrorName>().toEqualTypeOf<
      | 'APIError'
      | 'BadRequestError'
      | 'AuthenticationError'
      | 'PermissionDeniedError'
      | 'NotFoundError'
      | 'ConflictError'
      | 'UnprocessableEntityError'
      | 'RateLimitError'
      | 'InternalServerError'
    >();
    expectTypeOf<BillingErrorName>().toEqualTypeOf<keyof BillingErrorClasses>();
  });

  it('lists exactly the names of the table, the HTTP ones being those whose class is an APIError', () => {
    // names.ts lists the names apart from the table (the base class types its `name` with them):
    // the compiler keeps the two lists equal.
    type FromTable = {
      [N in keyof BillingErrorClasses]: BillingErrorClasses[N] extends Pick<APIError, 'status' | 'body'>
        ? N
        : never;
    }[keyof BillingErrorClasses];
    expectTypeOf<BillingErrorName>().toEqualTypeOf<keyof BillingErrorClasses>();
    expectTypeOf<APIErrorName>().toEqualTypeOf<FromTable>();
  });

  it('exports one class per name, whose brand and instances carry that name', () => {
    const classes = Object.entries(sdk).filter(
      ([, value]) =>
        typeof value === 'function' &&
        (value === sdk.BillingError || value.prototype instanceof sdk.BillingError),
    );
    // The compiler checks this list against the table: a name missing here or not in the table fails to compile.
    const names: Record<BillingErrorName, true> = {
      BillingError: true,
      APIError: true,
      BadRequestError: true,
      AuthenticationError: true,
      PermissionDeniedError: true,
      NotFoundError: true,
      ConflictError: true,
      UnprocessableEntityError: true,
      RateLimitError: true,
      InternalServerError: true,
      APIConnectionError: true,
      APITimeoutError: true,
      APIUserAbortError: true,
      ResponseTooLargeError: true,
      InvalidRequestError: true,
      ResponseValidationError: true,
      PaginationError: true,
      HostedLinkError: true,
      WebhookError: true,
      SpoolError: true,
      StoreError: true,
      SettleRefusedError: true,
      InsufficientCreditsError: true,
      UsageTrackerError: true,
      AccountViewError: true,
    };
    expect(classes.map(([name]) => name).sort()).toEqual(Object.keys(names).sort());
    for (const [exported, cls] of classes) {
      expect((cls as unknown as { brand: string }).brand, exported).toBe(exported);
      const name = exported as BillingErrorName;
      // Instances are made without their usual arguments here: only the name and the brand matter.
      const instance = Object.create((cls as { prototype: object }).prototype) as Error;
      expect(sdk.isBillingError(instance, name), exported).toBe(true);
    }
  });
});
