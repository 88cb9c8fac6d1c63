import type { GateHold } from '../gate/types.js';

/**
 * What the AI calls of one gated request have taken of its hold: `spent` by calls that ended,
 * `pending` reserved by calls under way (their bounds), and `running`, what each streamed call
 * under way has cost so far. One book per hold, shared by every meter.
 */
interface Book {
  spent: number;
  pending: number;
  running: Map<object, number>;
}

const books = new WeakMap<GateHold, Book>();

const bookOf = (hold: GateHold): Book => {
  let book = books.get(hold);
  if (!book) {
    book = { spent: 0, pending: 0, running: new Map() };
    books.set(hold, book);
  }
  return book;
};

/** What the route's hold has left for another call. */
export const leftOf = (hold: GateHold): number => {
  const book = bookOf(hold);
  return hold.quantity - book.spent - book.pending;
};

/**
 * Takes `bound` of the hold for a call under way (all it has left when `bound` is undefined):
 * the amount taken, or `undefined` when the hold cannot cover it (the call is refused before the provider).
 */
export function takeFrom(hold: GateHold, bound: number | undefined): number | undefined {
  const left = leftOf(hold);
  const take = bound ?? left;
  if (take < 1 || take > left) return undefined;
  bookOf(hold).pending += take;
  return take;
}

/**
 * Turns a call's share into what it cost (at most what is left of the hold: the most the route may
 * debit) and tells the hold the route's total: the gate settles it after the answer, and settles it
 * even when the client left. Answers the cost charged.
 */
export function spendFrom(hold: GateHold, call: object, taken: number, cost: number): number {
  const book = bookOf(hold);
  book.pending -= taken;
  book.running.delete(call);
  const charged = Math.min(cost, hold.quantity - book.spent - book.pending);
  book.spent += charged;
  tell(hold, runningTotal(book));
  return charged;
}

/**
 * A running estimate of a streamed call's cost while it streams: the gate sees it if the client
 * leaves before the call's end (the gate then settles what was spent, not nothing). Every call
 * under way counts, not only the last one heard.
 */
export function spendSoFar(hold: GateHold, call: object, taken: number, cost: number): void {
  const book = bookOf(hold);
  book.running.set(call, Math.min(cost, taken));
  tell(hold, runningTotal(book));
}

/** What the calls ended have spent, and those under way so far. */
function runningTotal(book: Book): number {
  let total = book.spent;
  for (const cost of book.running.values()) total += cost;
  return total;
}

/**
 * The gate's own hold settles what was spent even when the answer fails; another is told by `use`.
 * Known by its `spend`, not by `instanceof`: billing-sdk/ai is a bundle of its own, and the hold
 * comes from the gate of billing-sdk, another copy of the class.
 */
function tell(hold: GateHold, total: number): void {
  const gates = hold as GateHold & { spend?: ((spent: number) => void) | undefined };
  if (typeof gates.spend === 'function') gates.spend(total);
  else hold.use(total);
}

/**
 * A route's hold given to a wrap: from now on it settles what the calls spent (0 when none ran),
 * not the whole hold the gate settles for a handler that said nothing.
 */
export function attach(hold: GateHold): void {
  tell(hold, runningTotal(bookOf(hold)));
}
