import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BillingError,
  createNodeWebhookHandler,
  createWebhookHandler,
  type DedupeStore,
  InvalidRequestError,
  parseWebhook,
  WebhookError,
  type WebhookHandlerOptions,
} from '../../src/index.js';
import { MAX_DURATION_MS } from '../../src/internal/duration.js';
import { webhookProcessor } from '../../src/webhooks/handle.js';
import { anything, binaryString } from '../arbitraries.js';

// Whatever a sender posts and whatever the user's callbacks and store do, parsing gives an event or
// a WebhookError, and the receiver gives an answer: never a throw, a rejection, or a hung request.

const unhandled: unknown[] = [];
const recordUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeAll(() => void process.on('unhandledRejection', recordUnhandled));
afterAll(async () => {
  // Node reports a rejection still unhandled once the microtask queue drained: by the next turn.
  await new Promise((resolve) => setImmediate(resolve));
  process.off('unhandledRejection', recordUnhandled);
  expect(unhandled).toEqual([]);
});

const runs = { numRuns: 200 };

/** Events with each field right most of the time, and otherwise `other` (anything, or any JSON). */
const eventLike = (other: fc.Arbitrary<unknown>) => {
  const mostly = <T>(good: fc.Arbitrary<T>) =>
    fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: other, weight: 1 });
  return fc.record(
    {
      event: mostly(fc.constantFrom('subscription-created', 'payment-failed')),
      transaction_id: mostly(fc.constantFrom('tx-1', 'tx-2', '__proto__', 'constructor', '')),
      account_ref_id: mostly(fc.string()),
      subscription_id: mostly(fc.string()),
      is_active: mostly(fc.boolean()),
      label_name: mostly(fc.string()),
      timestamp: mostly(fc.constantFrom('2026-01-01T00:00:00Z', '2026-01-01', 'yesterday')),
      extra: other,
    },
    {
      requiredKeys: [
        'event',
        'transaction_id',
        'account_ref_id',
        'subscription_id',
        'is_active',
        'label_name',
      ],
    },
  );
};
/** An event-like body as JSON text. */
const eventText = eventLike(fc.jsonValue()).map((e) => JSON.stringify(e));
/** Prints a hostile value in a counterexample without reading it (fast-check looks for this first). */
const printable = <T extends object>(value: T, label: string): T =>
  Object.defineProperty(value, fc.toStringMethod, { value: () => label });
/**
 * Objects a caller's code might pass that throw when read: a getter on one field, or a proxy whose
 * traps throw (symbol keys pass, so fast-check can still print it).
 */
const hostile = fc.oneof(
  eventLike(anything).chain((e) =>
    fc.constantFrom(...Object.keys(e)).map((field) =>
      printable(
        Object.defineProperty({ ...e }, field, {
          enumerable: true,
          get() {
            throw new Error(`reading ${field}`);
          },
        }),
        `event whose ${field} getter throws`,
      ),
    ),
  ),
  eventLike(anything).map(
    (e) =>
      new Proxy(printable({ ...e }, 'proxy whose traps throw'), {
        get: (target, key) => {
          if (typeof key === 'symbol') return Reflect.get(target, key);
          throw new Error('get trap');
        },
        ownKeys: () => {
          throw new Error('ownKeys trap');
        },
        getPrototypeOf: () => {
          throw new Error('getPrototypeOf trap');
        },
      }),
  ),
);
/** Bodies as the handlers see them: parsed objects, JSON text, other text, bytes, and anything. */
const body = fc.oneof(
  eventLike(anything),
  hostile,
  eventText,
  fc.json(),
  binaryString,
  fc.uint8Array(),
  binaryString.map((s) => new TextEncoder().encode(s)),
  fc.constant(new Uint8Array(new SharedArrayBuffer(4))),
  anything,
);

/** What a user callback or store method does when called. */
type Behaviour = 'ok' | 'throw' | 'reject' | 'throw-undefined' | 'reject-null' | 'return-weird';
const behaviour = fc.constantFrom<Behaviour>(
  'ok',
  'throw',
  'reject',
  'throw-undefined',
  'reject-null',
  'return-weird',
);
function act(how: Behaviour, value: unknown): unknown {
  switch (how) {
    case 'ok':
      return value;
    case 'throw':
      throw new Error('callback failed');
    case 'reject':
      return Promise.reject(new Error('callback failed'));
    case 'throw-undefined':
      throw undefined;
    case 'reject-null':
      return Promise.reject(null);
    case 'return-weird':
      // biome-ignore lint/suspicious/noThenProperty: on purpose, a thenable whose `then` is not a function.
      return { then: 5 };
  }
}
const options = fc
  .record({
    onEvent: behaviour,
    onError: behaviour,
    claim: behaviour,
    complete: behaviour,
    release: behaviour,
    outcome: fc.constantFrom('claimed', 'processing', 'done', 'unknown'),
  })
  .map(
    ({ onEvent, onError, claim, complete, release, outcome }): WebhookHandlerOptions =>
      // Printed in a counterexample as the behaviours, not the closures.
      Object.defineProperty(
        {
          onEvent: () => act(onEvent, undefined),
          // Returned, not voided: a rejection the test dropped itself would look like the handler's.
          onError: () => act(onError, undefined),
          dedupe: {
            claim: () => act(claim, outcome),
            renew: () => true,
            complete: () => act(complete, true),
            release: () => act(release, undefined),
          } as DedupeStore,
        },
        fc.toStringMethod,
        { value: () => JSON.stringify({ onEvent, onError, claim, complete, release, outcome }) },
      ),
  );

describe('parseWebhook, any input', () => {
  it('returns an event or throws WebhookError (never another error)', () => {
    fc.assert(
      fc.property(body, (input) => {
        try {
          const event = parseWebhook(input as never);
          expect(typeof event.transaction_id).toBe('string');
          expect(typeof event.is_active).toBe('boolean');
        } catch (err) {
          expect(err).toBeInstanceOf(BillingError);
          expect(err).toBeInstanceOf(WebhookError);
        }
      }),
      runs,
    );
  });
});

describe('the webhook processor, any body and any callback behaviour', () => {
  it('answers 200, 400, 409 or 500 with a JSON body, never throwing or rejecting', async () => {
    await fc.assert(
      fc.asyncProperty(options, fc.array(body, { minLength: 1, maxLength: 3 }), async (opts, bodies) => {
        const processBody = webhookProcessor(opts);
        // Several at once, so concurrent deliveries of one id share a run whatever fails.
        const replies = await Promise.all(bodies.map((b) => processBody(b as never)));
        for (const reply of replies) {
          expect([200, 400, 409, 500]).toContain(reply.status);
          expect(JSON.parse(JSON.stringify(reply.body))).toEqual(reply.body);
        }
      }),
      runs,
    );
  });
});

describe('createWebhookHandler, any request', () => {
  const method = fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE');
  const raw = fc.oneof(eventText, fc.json(), binaryString, fc.uint8Array({ maxLength: 2048 }));
  const limit = fc.option(fc.integer({ min: 0, max: 1024 }), { nil: undefined });

  it('resolves to a JSON Response with 200, 400, 405, 409, 413 or 500', async () => {
    await fc.assert(
      fc.asyncProperty(options, method, raw, limit, async (opts, m, payload, maxBodyBytes) => {
        const handler = createWebhookHandler({ ...opts, maxBodyBytes });
        const request = new Request('http://127.0.0.1/hooks', {
          method: m,
          body: m === 'GET' ? undefined : payload,
        });
        const response = await handler(request);
        expect([200, 400, 405, 409, 413, 500]).toContain(response.status);
        expect(response.headers.get('content-type')).toBe('application/json');
        expect(typeof (await response.json())).toBe('object');
      }),
      runs,
    );
  });
});

describe("the handlers' options, anything", () => {
  const makers = [
    ['createWebhookHandler', createWebhookHandler],
    ['createNodeWebhookHandler', createNodeWebhookHandler],
  ] as const;
  const absent = (v: unknown) => v === undefined || v === null;
  const hasMethods = (v: unknown, names: string[]) =>
    typeof v === 'object' &&
    v !== null &&
    names.every((m) => typeof (v as Record<string, unknown>)[m] === 'function');
  /** What each option accepts, written from the documentation (not from the handlers' rules). */
  const accepts: Record<keyof WebhookHandlerOptions, (v: unknown) => boolean> = {
    onEvent: (v) => typeof v === 'function',
    onError: (v) => absent(v) || typeof v === 'function',
    dedupe: (v) => absent(v) || hasMethods(v, ['claim', 'renew', 'complete', 'release']),
    claimTtlMs: (v) =>
      absent(v) || (typeof v === 'number' && Number.isFinite(v) && v >= 1 && v <= MAX_DURATION_MS),
    maxBodyBytes: (v) => absent(v) || (typeof v === 'number' && v >= 0),
    access: (v) => absent(v) || hasMethods(v, ['invalidate']),
    holds: (v) => absent(v) || hasMethods(v, ['invalidate']),
  };
  const good: Record<keyof WebhookHandlerOptions, fc.Arbitrary<unknown>> = {
    onEvent: fc.constant(() => {}),
    onError: fc.constantFrom(undefined, null, () => {}),
    dedupe: fc.constantFrom(undefined, {
      claim: () => 'claimed',
      renew: () => true,
      complete: () => true,
      release: () => {},
    }),
    claimTtlMs: fc.oneof(fc.constant(undefined), fc.double({ min: 1, max: 1e9, noNaN: true })),
    maxBodyBytes: fc.oneof(fc.constant(undefined), fc.nat(), fc.constant(Number.POSITIVE_INFINITY)),
    access: fc.constantFrom(undefined, { invalidate: () => {} }),
    holds: fc.constantFrom(undefined, { invalidate: () => {} }),
  };
  const names = Object.keys(accepts) as (keyof WebhookHandlerOptions)[];
  /** Each option right, or anything at all in its place; sometimes with a key no handler knows. */
  const optionsLike = fc
    .record({
      ...Object.fromEntries(
        names.map((name) => [
          name,
          fc.oneof({ arbitrary: good[name], weight: 3 }, { arbitrary: anything, weight: 1 }),
        ]),
      ),
      unknown: fc.option(fc.tuple(fc.constantFrom('claimTTL', 'maxBytes', 'onevent'), anything), {
        freq: 5,
        nil: undefined,
      }),
    })
    .map(({ unknown, ...options }) => (unknown ? { ...options, [unknown[0]]: unknown[1] } : options));

  it('a handler is made when every option is right, else InvalidRequestError naming the options, never another error', () => {
    fc.assert(
      fc.property(optionsLike, fc.constantFrom(...makers), (options, [operation, make]) => {
        const wrong = names.filter((name) => !accepts[name]((options as Record<string, unknown>)[name]));
        const unknown = Object.keys(options).filter((key) => !names.includes(key as never));
        let error: unknown;
        try {
          make(options as WebhookHandlerOptions);
        } catch (caught) {
          error = caught;
        }
        if (!wrong.length && !unknown.length) {
          expect(error).toBeUndefined();
          return;
        }
        expect(error, String(error)).toBeInstanceOf(InvalidRequestError);
        const { operation: named, issues } = error as InvalidRequestError;
        expect(named).toBe(operation);
        expect(issues.map((i) => i.field).sort()).toEqual(
          [...wrong, ...unknown].map((name) => `options.${name}`).sort(),
        );
      }),
      runs,
    );
  });

  it('options that are not a plain object throw InvalidRequestError, never another error', () => {
    fc.assert(
      fc.property(
        anything.filter(
          (v) =>
            v === null ||
            typeof v !== 'object' ||
            ![Object.prototype, null].includes(Object.getPrototypeOf(v)),
        ),
        fc.constantFrom(...makers),
        (options, [operation, make]) => {
          let error: unknown;
          try {
            make(options as WebhookHandlerOptions);
          } catch (caught) {
            error = caught;
          }
          expect(error, String(error)).toBeInstanceOf(InvalidRequestError);
          expect((error as InvalidRequestError).operation).toBe(operation);
          expect((error as InvalidRequestError).issues[0]?.field).toMatch(/^options(\.onEvent)?$/);
        },
      ),
      runs,
    );
  });
});
