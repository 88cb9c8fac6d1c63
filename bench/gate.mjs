// The gate in process: an Express app driven by light-my-request's `inject`, a Hono app by
// `app.fetch(new Request(…))`, each with the same route plain, behind one async no-op middleware, and
// gated (the middleware form and the handler wrapped), every request answered from the access cache.
// Goals (issue 34): gated ≤ the no-op middleware + 2 µs per request (tinybench's median, the mean
// swings with GC pauses); `gate.check` from memory p99 ≤ 20 µs. Beside them, for reading: this
// process's CPU per request (what other processes' load moves least), and each middleware called
// alone as its framework calls it (the gate's own cost without the framework's noise around it).
// In 3 processes (forks, as JMH runs a benchmark): in one process, a route's figure moved by up to
// 3 µs against an identical route beside it (each process draws its own JIT and memory layout).
import { BillingClient, createAccessCache, createGate } from 'billing-sdk';
import { DEMO, startMockServer } from 'billing-sdk/testing';
import express from 'express';
import { Hono } from 'hono';
import { inject } from 'light-my-request';
import { childMain, goal, inChild, isMain, median, r3, timeTasks } from './lib.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'Gate';
export const how =
  "In process, no HTTP: Express through light-my-request's `inject`, Hono through `app.fetch(new Request(…))`; each route is the one route of an app of its own (so each pays the same routing), the same JSON route plain, behind one async no-op middleware, behind one that awaits once before `next()`, behind one that asks the access cache's prepared lookup as the gate does (with `{ outcome }`) before `next()`, behind `gate.express(need)`/`gate.hono(need)`, and wrapped (`gate.express(need, handler)`/`gate.hono(need, handler)`). The access cache holds the answer (every request answered from memory; the mock counted no request while timing). tinybench, rounds of 60 ms of every route in turn (the order rotating each round), in 3 processes of 20 rounds each (forks, as JMH runs a benchmark: each process's JIT and memory layout differ, and one process's figure for a route moved by up to 3 µs against an identical route beside it); the difference to the no-op route is taken per round, median of the 60 rounds (CPU: this process's CPU time per request, same rounds). \"Alone\": the gate's middleware and the no-op called directly as the framework calls them (a Hono-like context with the `Request`, a `next` that resolves; Express's `(req, res, next)` until `next` is called).";

const NEED = { subscription: 'pro-plan', tier: 'pro' };
const HEADERS = { 'x-account': DEMO.accounts.active, accept: 'application/json' };
const HOUR = 3_600_000;
/** Processes, and rounds in each. */
const FORKS = 3;
const ROUNDS = 20;

function expressApp(gate, lookup) {
  const handler = (req, res) =>
    res.json({ account: res.locals.billing?.account ?? req.headers['x-account'] });
  const noop = async (_req, _res, next) => next();
  // The gate decides asynchronously: like any middleware that awaits before next(), the rest of the
  // chain then runs in a later microtask. This one does only that, for comparison.
  const awaited = async (_req, _res, next) => {
    await undefined;
    next();
  };
  // One app per route, each route at '/': every route pays the same routing (Express tries its
  // routes in order, so in one app a later route would pay for the layers before it).
  const apps = {
    '/plain': [handler],
    '/noop': [noop, handler],
    '/awaited': [awaited, handler],
    '/looked': [
      (req, res, next) => {
        lookup(req.headers['x-account']).then((yes) => {
          res.locals.billing = { allowed: yes };
          next();
        }, next);
      },
      handler,
    ],
    '/gated': [gate.express(NEED), handler],
    '/wrapped': [gate.express(NEED, handler)],
  };
  for (const [path, handlers] of Object.entries(apps)) {
    const app = express();
    app.get('/', ...handlers);
    apps[path] = app;
  }
  return (path) => inject(apps[path], { method: 'GET', url: '/', headers: HEADERS });
}

function honoApp(gate, lookup) {
  const handler = (c) => c.json({ account: c.get('billing')?.account ?? c.req.header('x-account') });
  const noop = async (_c, next) => {
    await next();
  };
  const awaited = async (_c, next) => {
    await undefined;
    await next();
  };
  // One app per route, as for Express.
  const apps = {
    '/plain': [handler],
    '/noop': [noop, handler],
    '/awaited': [awaited, handler],
    '/looked': [
      async (c, next) => {
        c.set('billing', { allowed: await lookup(c.req.header('x-account')) });
        await next();
      },
      handler,
    ],
    '/gated': [gate.hono(NEED), handler],
    '/wrapped': [gate.hono(NEED, handler)],
  };
  for (const [path, handlers] of Object.entries(apps)) {
    const app = new Hono();
    app.get('/', ...handlers);
    apps[path] = app;
  }
  return (path) => apps[path].fetch(new Request('http://app.local/', { headers: HEADERS }));
}

/**
 * The gate's middleware and one async no-op, each called as its framework calls it, with nothing
 * around: what the gate itself adds, without the framework's noise.
 */
function alone(nodeGate, fetchGate) {
  const raw = new Request('http://app.local/alone', { headers: HEADERS });
  const c = { req: { raw }, res: { status: 200 }, set() {} };
  const next = async () => {};
  const honoNoop = async (_c, n) => {
    await n();
  };
  const req = { method: 'GET', url: '/alone', headers: { ...HEADERS, host: 'app.local' } };
  const res = { statusCode: 200, once() {} };
  const expressNoop = async (_req, _res, n) => n();
  const hono = fetchGate.hono(NEED);
  const express = nodeGate.express(NEED);
  const viaNext = (mw) => () =>
    new Promise((resolve, reject) => mw(req, res, (e) => (e ? reject(e) : resolve())));
  return {
    'hono noop alone': () => honoNoop(c, next),
    'hono gated alone': () => hono(c, next),
    'express noop alone': viaNext(expressNoop),
    'express gated alone': viaNext(express),
  };
}

/** Every route answers 200 with the account: a gate that denied or failed would not be timed. */
async function checked(send, path) {
  const res = await send(path);
  const status = res.statusCode ?? res.status;
  const body = res.json();
  const { account } = await body;
  if (status !== 200 || account !== DEMO.accounts.active) throw new Error(`${path}: ${status} ${account}`);
}

/** One fork: the apps, then `rounds` rounds of every task; the rounds and the requests the mock saw while timing. */
async function fork({ rounds: count }) {
  const mock = await startMockServer({ host: '127.0.0.1' });
  const billing = new BillingClient({ baseUrl: mock.baseUrl, apiKey: mock.apiKey, logLevel: 'off' });
  // Answers outlive the run: every timed request is answered from memory.
  const access = createAccessCache(billing, { ttlMs: HOUR, denyTtlMs: HOUR, staleMs: HOUR });
  const nodeGate = createGate({ billing, access, account: (req) => req.headers['x-account'] });
  const fetchGate = createGate({
    billing,
    access,
    account: (req) => req.headers.get('x-account') ?? undefined,
  });
  // The access cache's lookup as the gate asks it (prepared with the route, the answer's source
  // asked for): what the lookup alone costs in the app, beside the gate's whole decision.
  const prepared = access.prepare('isActive', NEED);
  const lookup = (account) => prepared(account, { outcome: {} });
  const apps = { express: expressApp(nodeGate, lookup), hono: honoApp(fetchGate, lookup) };
  const routes = ['plain', 'noop', 'awaited', 'looked', 'gated', 'wrapped'];
  const tasks = {};
  for (const [framework, send] of Object.entries(apps)) {
    for (const route of routes) {
      await checked(send, `/${route}`);
      tasks[`${framework} ${route}`] = () => checked(send, `/${route}`);
    }
  }
  const fetchRequest = new Request('http://app.local/reports', { headers: HEADERS });
  const nodeRequest = { method: 'GET', url: '/reports', headers: { ...HEADERS, host: 'app.local' } };
  const allowed = (d) => {
    if (d.allowed !== true || d.source !== 'cache') throw new Error(`not allowed from memory: ${d.reason}`);
  };
  tasks['gate.check (Fetch Request)'] = async () => allowed(await fetchGate.check(fetchRequest, NEED));
  tasks['gate.check (Node request)'] = async () => allowed(await nodeGate.check(nodeRequest, NEED));
  Object.assign(tasks, alone(nodeGate, fetchGate));
  const before = mock.requests.count();
  await tasks['gate.check (Fetch Request)']();
  // Rounds of every task in turn, so a noisy moment of the machine hits every route alike.
  const rounds = [];
  for (let i = 0; i < count; i++)
    rounds.push(await timeTasks(tasks, { time: 60, warmupTime: 15, rotate: i }));
  const asked = mock.requests.count() - before;
  await mock.close();
  return { rounds, asked, frameworks: Object.keys(apps), tasks: Object.keys(tasks) };
}

/** Runs the scenario in its forks: its goals first, then the figures behind them. */
export async function run() {
  const forks = [];
  for (let i = 0; i < FORKS; i++) forks.push(await inChild(import.meta.url, { rounds: ROUNDS }));
  const rounds = forks.flatMap((f) => f.rounds);
  const asked = forks.reduce((n, f) => n + f.asked, 0);
  const apps = Object.fromEntries(forks[0].frameworks.map((f) => [f, true]));
  const tasks = Object.fromEntries(forks[0].tasks.map((t) => [t, true]));
  const per = (task, stat) => median(rounds.map((r) => r[task][stat]));
  const added = (framework, route, stat) =>
    median(rounds.map((r) => r[`${framework} ${route}`][stat] - r[`${framework} noop`][stat]));
  const aloneAdded = (framework, stat) =>
    median(rounds.map((r) => r[`${framework} gated alone`][stat] - r[`${framework} noop alone`][stat]));
  const table = Object.keys(tasks).map((task) => ({
    task,
    mean_us: per(task, 'mean'),
    p50_us: per(task, 'p50'),
    p99_us: per(task, 'p99'),
    cpu_us: per(task, 'cpu'),
  }));
  const goals = [];
  const signed = (x) => `${x >= 0 ? '+' : ''}${r3(x)}`;
  for (const framework of Object.keys(apps)) {
    for (const route of ['gated', 'wrapped']) {
      const p50 = r3(added(framework, route, 'p50'));
      goals.push(
        goal(
          `${framework}: ${route === 'gated' ? 'gate middleware' : 'handler wrapped by the gate'} vs one async no-op middleware`,
          `${signed(added(framework, route, 'mean'))} µs mean, ${signed(p50)} µs median, ${signed(added(framework, route, 'cpu'))} µs CPU per request (no-op route ${per(`${framework} noop`, 'mean')} µs)`,
          '≤ +2 µs (median)',
          p50 <= 2,
        ),
      );
    }
    goals.push(
      goal(
        `${framework}: one async middleware that awaits once before next() vs one async no-op middleware`,
        `${signed(added(framework, 'awaited', 'p50'))} µs median, ${signed(added(framework, 'awaited', 'cpu'))} µs CPU per request`,
        '',
        null,
      ),
      goal(
        `${framework}: one async middleware asking the access cache as the gate does (prepared, with the answer's source) vs one async no-op middleware`,
        `${signed(added(framework, 'looked', 'p50'))} µs median, ${signed(added(framework, 'looked', 'cpu'))} µs CPU per request`,
        '',
        null,
      ),
      goal(
        `${framework}: gate middleware alone vs one async no-op alone`,
        `${signed(aloneAdded(framework, 'p50'))} µs median, ${signed(aloneAdded(framework, 'cpu'))} µs CPU per call`,
        '',
        null,
      ),
    );
  }
  const p99 = Math.max(per('gate.check (Fetch Request)', 'p99'), per('gate.check (Node request)', 'p99'));
  goals.push(goal('gate.check allowed from memory, p99', `${p99} µs`, '≤ 20 µs', p99 <= 20));
  goals.push(goal('service requests while timing', String(asked), '0', asked === 0));
  return { goals, rounds: rounds.length, table };
}

if (isMain(import.meta)) childMain(fork);
