// Size-gate app 3: gates a feature through the access cache (client + createAccessCache).
import { BillingClient, createAccessCache } from 'billing-sdk';

const billing = new BillingClient({ apiKey: 'key', baseUrl: 'https://billing.example.com/api/' });
const access = createAccessCache(billing);
access.isActive({ account_ref_id: 'acct_1' }).then((active) => console.log(active));
