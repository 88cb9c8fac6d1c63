// Size-gate app 5: the browser's account view (billing-sdk/view), as a page uses it.
import { createAccountView } from 'billing-sdk/view';

const view = createAccountView({ url: '/billing/state' });
view.subscribe(() => console.log(view.can('export'), view.balance('ai-assistant', 'credits')));
