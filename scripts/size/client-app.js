// Size-gate app 1: constructs the client and calls one method.
import { BillingClient } from 'billing-sdk';

const billing = new BillingClient({ apiKey: 'key', baseUrl: 'https://billing.example.com/api/' });
billing.invoices.list({ account_ref_id: 'acct_1' }).then((page) => console.log(page.count));
