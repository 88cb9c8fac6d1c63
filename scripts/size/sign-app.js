// Size-gate app 2: imports only signHostedLink.
import { signHostedLink } from 'billing-sdk';

signHostedLink({ url: 'https://app.example.com/p/x', account_ref_id: 'acct_1', signingKey: 'key' }).then(
  console.log,
);
