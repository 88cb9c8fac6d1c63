// Metering: debit prepaid credits before an action, record usage after it.
// Run: node examples/metering.mjs
import { BillingClient } from 'billing-sdk';
import { startMockServer } from 'billing-sdk/testing';

const CREDITS = { product_code: 'ai-assistant', meter_code: 'credits' };
const API_CALLS = { product_code: 'api-gateway', meter_code: 'api_calls' };

/**
 * Runs `action` only if `cost` credits could be debited, then records one API call. The event keys
 * are derived from `jobId`, so running the same job twice (a queue redelivery, a crash and restart)
 * neither charges twice nor counts twice.
 */
export async function meteredJob(billing, { account_ref_id, jobId, cost }, action) {
  const debit = await billing.usage.debit({
    account_ref_id,
    ...CREDITS,
    quantity: cost,
    event_key: `${jobId}:debit`,
    metadata: { job: jobId },
  });
  if (!debit.approved) return { ran: false, reason: debit.error_code, balance: debit.remaining_balance };

  const output = await action();

  const usage = await billing.usage.record({
    account_ref_id,
    ...API_CALLS,
    quantity: 1,
    event_key: `${jobId}:call`,
  });
  return {
    ran: true,
    output,
    balance: debit.remaining_balance,
    recorded: usage.accepted,
    replay: usage.accepted && usage.idempotent,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = process.env.BILLING_BASE_URL ? undefined : await startMockServer();
  try {
    const billing = new BillingClient(mock ? { apiKey: mock.apiKey, baseUrl: mock.baseUrl } : {});
    const account_ref_id = 'acct_active';
    const summarise = async () => 'a three-line summary';

    const first = await meteredJob(billing, { account_ref_id, jobId: 'job-1', cost: 40 }, summarise);
    console.log('job-1:', first);
    const again = await meteredJob(billing, { account_ref_id, jobId: 'job-1', cost: 40 }, summarise);
    console.log('job-1 redelivered:', again);
    const huge = await meteredJob(billing, { account_ref_id, jobId: 'job-2', cost: 1_000_000 }, summarise);
    console.log('job-2:', huge);

    const { balance } = await billing.usage.balance({ account_ref_id, ...CREDITS });
    const { total_usage } = await billing.usage.summary({
      account_ref_id,
      ...API_CALLS,
      start: new Date('2026-01-01'),
    });
    console.log(`credits left: ${balance}; api_calls recorded since 2026-01-01: ${total_usage}`);
    if (balance !== 960 || !again.replay || huge.ran) throw new Error('metering did not behave as expected');
  } finally {
    await mock?.close();
  }
}
