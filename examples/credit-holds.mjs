// Credits priced after the action: reserve the most a job may cost, settle what it used.
// Run: node examples/credit-holds.mjs
import { BillingClient, createCreditHolds } from 'billing-sdk';
import { startMockServer } from 'billing-sdk/testing';

const CREDITS = { product_code: 'ai-assistant', meter_code: 'credits' };
/** The most one completion may cost: its max_tokens. */
const MAX_TOKENS = 400;

/** Stands in for an LLM call: how many tokens it used is known only after it ran. */
async function complete(prompt) {
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { text: `an answer to ${prompt}`, tokens: 90 + prompt.length * 7 };
}

/**
 * Runs one completion for the account, charged for the tokens it used. The hold is granted only
 * while the balance minus every other job's hold covers MAX_TOKENS, so jobs running at once never
 * spend together more than the account has. A failed call releases the hold: nothing is charged.
 */
export async function chargedCompletion(holds, account_ref_id, prompt) {
  const r = await holds.reserve({ account_ref_id, ...CREDITS, quantity: MAX_TOKENS, ttlMs: 60_000 });
  if (!r.approved) return { ran: false, available: r.available };
  let answer;
  try {
    answer = await complete(prompt);
  } catch (error) {
    await r.hold.release();
    throw error;
  }
  const debit = await r.hold.settle(answer.tokens); // one debit, under the hold's event_key
  return { ran: true, tokens: answer.tokens, remaining: debit.remaining_balance };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = process.env.BILLING_BASE_URL ? undefined : await startMockServer();
  try {
    const billing = new BillingClient(mock ? { apiKey: mock.apiKey, baseUrl: mock.baseUrl } : {});
    const holds = createCreditHolds(billing); // one process; redisHoldStore or postgresHoldStore for several
    const account_ref_id = 'acct_active'; // 1000 credits in the mock

    // Three jobs at once: two fit (2 × 400 ≤ 1000), the third waits for credits.
    const jobs = await Promise.all(
      ['a', 'bb', 'ccc'].map((p) => chargedCompletion(holds, account_ref_id, p)),
    );
    for (const job of jobs)
      console.log(job.ran ? `ran: ${job.tokens} tokens charged` : `refused: ${job.available} available`);

    const { balance } = await billing.usage.balance({ account_ref_id, ...CREDITS });
    console.log(`balance ${balance}: charged what was used (${1_000 - balance}), not what was held`);
    console.log('holds:', holds.stats());
  } finally {
    await mock?.close();
  }
}
