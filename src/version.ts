/** This package's version, sent in the user agent. A test keeps it equal to package.json's. */
export const VERSION = '0.1.0';
