// Size-gate app 4: reserves and settles prepaid credits (client + createCreditHolds, memory store).
import { BillingClient, createCreditHolds } from 'billing-sdk';

const billing = new BillingClient({ apiKey: 'key', baseUrl: 'https://billing.example.com/api/' });
const holds = createCreditHolds(billing);
holds
  .reserve({ account_ref_id: 'acct_1', product_code: 'ai-assistant', meter_code: 'credits', quantity: 100 })
  .then((r) => (r.approved ? r.hold.settle(42) : r.available))
  .then((result) => console.log(result));
