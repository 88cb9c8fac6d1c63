import { tellDebits, watchAccounts } from '../util/account-changes.js';
import { safely } from '../util/safely.js';
import { problem } from './answer.js';
import { accountOf } from './decide.js';
import type { PaywallLinks } from './links.js';
import { headerOf } from './request.js';
import { Balances, checkView, readState } from './state-read.js';
import { STREAM_HEADERS, StateStreams } from './state-stream.js';
import type {
  AccountStateHandler,
  AccountStateView,
  StateFastifyReply,
  StateNodeResponse,
} from './state-types.js';
import type { GateOptions, GateRequest } from './types.js';
import { DEFAULT_RETRY_AFTER_S, isUnavailable, retryAfterOf } from './unavailable.js';

/** A JSON state is the account's own and of this moment: no cache, shared or private, may keep it. */
const JSON_HEADERS = {
  'content-type': 'application/json',
  'cache-control': 'private, no-store',
  vary: 'accept',
};

/**
 * `gate.state(view)`: the handler that answers the request's own account's state (see
 * {@link AccountStateHandler}), made from the gate's options and paywall links.
 */
export function stateHandler<Req extends GateRequest>(
  options: GateOptions<Req>,
  links: PaywallLinks | undefined,
  view: AccountStateView,
): AccountStateHandler<Req> {
  const checked = checkView(view, options.access, links !== undefined);
  const balances = new Balances(options.billing, checked.balanceTtlMs);
  // Changes heard so far: a stream whose first state was read while one came reads again at once
  // (the streams hear nothing of an account before its stream is open).
  let changes = 0;
  const drop = (account: string | undefined) => {
    changes++;
    balances.drop(account);
  };
  // The balances hear every change for the handler's life; the streams only while one is open.
  const owners = [options.access, options.billing];
  tellDebits(options.billing);
  const unwatch = owners.map((owner) => watchAccounts(owner, drop));
  const streams = new StateStreams(checked, owners, drop);
  const reader = { access: options.access, view: checked, balances, links };
  let closed = false;

  const unavailable = (seconds: number) =>
    problem(
      503,
      'unavailable',
      'Billing could not be reached; try again later.',
      {},
      { 'retry-after': String(seconds) },
    );

  /** The answer to one request; a stream ends when `signal` aborts. */
  async function answer(request: Req, signal: AbortSignal | undefined): Promise<Response> {
    if (closed) return unavailable(DEFAULT_RETRY_AFTER_S);
    // The app's own authentication names the account: nothing in the request can name another.
    const account = accountOf(await options.account(request));
    if (account === undefined) {
      return problem(401, 'unauthenticated', 'The request does not say which account asks.');
    }
    const live = (headerOf(request, 'accept') ?? '').includes('text/event-stream');
    const full = () =>
      problem(
        429,
        'too_many_streams',
        'Too many streams are open; close one or read the state as JSON.',
        {},
        {
          'retry-after': String(DEFAULT_RETRY_AFTER_S),
        },
      );
    if (live && !streams.hasRoom(account)) return full();
    const email = checked.paywall ? ((await options.paywall?.email?.(request)) ?? undefined) : undefined;
    const report = (error: unknown) => safely(() => options.onError?.(error, request));
    const read = () => readState(reader, account, email);
    const seen = changes;
    let state: Awaited<ReturnType<typeof read>>;
    try {
      state = await read();
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      report(error);
      return unavailable(retryAfterOf(error) ?? DEFAULT_RETRY_AFTER_S);
    }
    if (!live) return new Response(JSON.stringify(state), { headers: JSON_HEADERS });
    if (closed) return unavailable(DEFAULT_RETRY_AFTER_S);
    const body = streams.open(account, state, read, signal, report, changes !== seen);
    return body ? new Response(body, { headers: STREAM_HEADERS }) : full();
  }

  /** Node's answer, its stream ended when the connection closes. */
  const nodeAnswer = (request: Req, res: { once(event: 'close', listener: () => void): unknown }) => {
    const controller = new AbortController();
    res.once('close', () => controller.abort());
    return answer(request, controller.signal);
  };

  const express = (req: Req, res: StateNodeResponse, next: (error?: unknown) => void) =>
    nodeAnswer(req, res)
      .then((response) => writeNode(res, response))
      .catch(next);

  return {
    fetch: (request) => answer(request, (request as { signal?: AbortSignal }).signal),
    hono: (c) => answer(c.req.raw as unknown as Req, c.req.raw.signal),
    express,
    async fastify(request, reply: StateFastifyReply) {
      const response = await nodeAnswer(request, reply.raw);
      if (response.body && response.headers.get('content-type')?.startsWith('text/event-stream')) {
        // Fastify would buffer or end it: the stream is written to Node's response itself.
        reply.hijack?.();
        await writeNode(reply.raw, response);
        return reply;
      }
      reply.code(response.status);
      response.headers.forEach((value, name) => void reply.header(name, value));
      return reply.send(await response.text());
    },
    async close() {
      closed = true;
      for (const stop of unwatch) stop();
      streams.close();
    },
    stats: () => streams.stats(),
  };
}

/**
 * Writes a Fetch answer to Node's response, its body chunk by chunk as it comes (a stream's events
 * reach the browser at once); the body is cancelled when the connection closes first. A full write
 * buffer (a client that stopped reading) is waited out before the next chunk is read, so the state
 * stream, not Node's buffer, decides what waits (the latest state only).
 */
async function writeNode(res: StateNodeResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  let closed = false;
  let drained: (() => void) | undefined;
  res.once('close', () => {
    closed = true;
    drained?.();
    void reader.cancel().catch(() => {});
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (res.write(value) === false && !closed) {
      await new Promise<void>((resolve) => {
        drained = resolve;
        res.once('drain', resolve);
      });
      drained = undefined;
    }
  }
  res.end();
}
