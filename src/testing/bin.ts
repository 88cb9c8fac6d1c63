// `billing-sdk-mock`: the mock server as a standalone process (filled in by issue 12).
export {};
