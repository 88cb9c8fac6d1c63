// The diagnostics_channel step every runtime runs against the mock (Deno and Bun through serve.mjs,
// workerd with nodejs_compat through tracing-worker.mjs). It subscribes as an app would, with the
// runtime's own `node:diagnostics_channel`, and makes the SDK's calls; what the subscribers saw comes
// back as plain JSON for the Node test to check. The SDK is imported by its name, as in scenario.mjs,
// so each runtime runs the build its export conditions pick.
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import process from 'node:process';
import { BillingClient, createAccessCache, createUsageTracker } from 'billing-sdk';

const ACCOUNT = 'acct_active';
/** An account the mock does not know: `accounts.status` answers 404. */
const NOBODY = 'acct_nobody';
/** The demo seed's postpaid meter: the tracker's event is recorded. */
const METER = { account_ref_id: ACCOUNT, product_code: 'api-gateway', meter_code: 'api_calls' };

const TRACED = ['billing-sdk:request', 'billing-sdk:attempt'];
const EVENTS = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'];
const PLAIN = ['billing-sdk:access', 'billing-sdk:tracker'];
/** Context fields that are not the SDK's own description of the call: reported apart, or not at all. */
const NOT_FIELDS = new Set(['error', 'result', 'request']);

/**
 * @param {{ baseUrl: string, apiKey: string }} config
 * @returns {Promise<Record<string, unknown>>} plain JSON, for a Response
 */
export async function runTracing({ baseUrl, apiKey }) {
  // Instant retries: the step is about what is published, not how long the backoff is.
  const billing = new BillingClient({ baseUrl, apiKey, retryDelay: () => 0 });
  const seen = record();
  try {
    seen.step = 'retried';
    await addFault(baseUrl, apiKey, { path: '/api/invoices/', status: 503 });
    const page = await billing.invoices.list({ account_ref_id: ACCOUNT, page_size: 5 });
    const retried = { invoices: page.results.length };

    seen.step = 'failed';
    const failed = await outcome(() => billing.accounts.status({ account_ref_id: NOBODY }));

    seen.step = 'access';
    const access = createAccessCache(billing);
    const lookups = [
      await access.isActive({ account_ref_id: ACCOUNT }),
      await access.isActive({ account_ref_id: ACCOUNT }),
    ];
    await access.close();

    seen.step = 'tracker';
    const tracker = createUsageTracker(billing);
    await tracker.track({ ...METER, quantity: 1 });
    await tracker.flush();
    const closed = await tracker.close();

    seen.stop();
    return {
      events: seen.events,
      retried,
      failed,
      access: lookups,
      tracker: { stats: tracker.stats(), unsent: closed.unsent },
      throwing: await throwingSubscribers(billing, () => requestCount(baseUrl, apiKey)),
    };
  } finally {
    seen.stop();
  }
}

/**
 * Subscribes to both tracing channels (every event) and both plain channels, and records a JSON copy
 * of each message as it was when published, tagged with the step that was running.
 */
function record() {
  const recorder = { step: undefined, events: [], stop: () => {} };
  let stopped = false;
  const stops = [];
  for (const name of TRACED) {
    const handlers = {};
    for (const event of EVENTS) {
      handlers[event] = (context) => {
        const fields = {};
        for (const [key, value] of Object.entries(context)) if (!NOT_FIELDS.has(key)) fields[key] = value;
        recorder.events.push({
          step: recorder.step,
          channel: name,
          event,
          fields,
          error:
            'error' in context ? { name: context.error?.name, status: context.error?.status } : undefined,
          hasResult: 'result' in context,
        });
      };
    }
    const tc = tracingChannel(name);
    tc.subscribe(handlers);
    stops.push(() => tc.unsubscribe(handlers));
  }
  for (const name of PLAIN) {
    const onMessage = (message) => {
      recorder.events.push({
        step: recorder.step,
        channel: name,
        event: message.event,
        fields: { ...message },
      });
    };
    subscribe(name, onMessage);
    stops.push(() => unsubscribe(name, onMessage));
  }
  recorder.stop = () => {
    if (stopped) return;
    stopped = true;
    for (const stop of stops) stop();
  };
  return recorder;
}

/** Queues a fault in the mock through its control surface over HTTP (`POST /_mock/faults`). */
async function addFault(baseUrl, apiKey, fault) {
  const response = await fetch(new URL('/_mock/faults', baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify(fault),
  });
  if (response.status !== 201)
    throw new Error(`POST /_mock/faults: ${response.status} ${await response.text()}`);
}

/** How many `/api/` requests the mock has recorded (its control surface over HTTP). */
async function requestCount(baseUrl, apiKey) {
  const response = await fetch(new URL('/_mock/requests?path=/api/', baseUrl), {
    headers: { 'x-api-key': apiKey },
  });
  if (response.status !== 200) throw new Error(`GET /_mock/requests: ${response.status}`);
  return (await response.json()).requests.length;
}

/**
 * A call's outcome as JSON: its value, or its error's name, status and message, and whether the
 * method threw at once instead of returning a promise that rejects.
 */
async function outcome(call) {
  let pending;
  try {
    pending = call();
  } catch (error) {
    return { ...failure(error), synchronous: true };
  }
  try {
    return { ok: true, value: await pending };
  } catch (error) {
    return failure(error);
  }
}

function failure(error) {
  return { ok: false, name: error?.name, status: error?.status, message: String(error?.message ?? error) };
}

/**
 * Long enough for an error a runtime reports on the next tick to be reported, and for a request a
 * case left behind (a call whose caller already got an error) to be answered before the next case.
 */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

/**
 * One subscriber that throws, on one event of one channel at a time, around the call that publishes
 * it (a successful `accounts.status`, a 404 one for `error`, two access lookups for the access
 * channel). Each case reports the call's outcome and the requests the mock received, beside the same
 * call's without the thrower, how often the thrower ran, and the errors the runtime reported as
 * uncaught exceptions meanwhile (Node reports each subscriber's error there, on the next tick).
 *
 * @param {BillingClient} billing
 * @param {() => Promise<number>} requestCount the mock's count of recorded `/api/` requests
 */
async function throwingSubscribers(billing, requestCount) {
  const boom = new Error('subscriber bug');
  let thrown = 0;
  const thrower = () => {
    thrown++;
    throw boom;
  };
  const calls = {
    ok: () => billing.accounts.status({ account_ref_id: ACCOUNT }),
    notFound: () => billing.accounts.status({ account_ref_id: NOBODY }),
    access: async () => {
      const access = createAccessCache(billing);
      try {
        const first = await access.isActive({ account_ref_id: ACCOUNT });
        return [first, await access.isActive({ account_ref_id: ACCOUNT })];
      } finally {
        await access.close();
      }
    },
  };
  /** The call's outcome and how many requests reached the mock, once what it left behind settled. */
  const run = async (call) => {
    const before = await requestCount();
    const result = await outcome(call);
    await settle();
    return { outcome: result, sent: (await requestCount()) - before };
  };

  const baseline = {};
  for (const [name, call] of Object.entries(calls)) baseline[name] = await run(call);

  const cases = [];
  for (const channel of TRACED) {
    for (const event of EVENTS) cases.push({ channel, event, call: event === 'error' ? 'notFound' : 'ok' });
  }
  cases.push({ channel: 'billing-sdk:access', event: 'message', call: 'access' });

  // The SDK traces attempts only within a traced call: a quiet subscriber keeps the call traced while
  // the thrower sits on one attempt event alone.
  const quiet = Object.fromEntries(EVENTS.map((event) => [event, () => {}]));
  const requestChannel = tracingChannel('billing-sdk:request');
  requestChannel.subscribe(quiet);
  const uncaught = [];
  const onUncaught = (error) => uncaught.push(error);
  process.on('uncaughtException', onUncaught);
  const results = [];
  try {
    for (const { channel, event, call } of cases) {
      const on = event === 'message' ? undefined : { [event]: thrower };
      const subscription = on
        ? {
            add: () => tracingChannel(channel).subscribe(on),
            remove: () => tracingChannel(channel).unsubscribe(on),
          }
        : { add: () => subscribe(channel, thrower), remove: () => unsubscribe(channel, thrower) };
      thrown = 0;
      uncaught.length = 0;
      subscription.add();
      let result;
      try {
        result = await run(calls[call]);
      } finally {
        subscription.remove();
      }
      results.push({
        channel,
        event,
        call,
        thrown,
        ...result,
        unchanged: JSON.stringify(result) === JSON.stringify(baseline[call]),
        uncaught: uncaught.length,
        uncaughtAreTheSubscribers: uncaught.every((error) => error === boom),
      });
    }
  } finally {
    process.off('uncaughtException', onUncaught);
    requestChannel.unsubscribe(quiet);
  }
  return { baseline, cases: results };
}
