export * from './accounts.ts';
export * from './api-key.ts';
export * from './authenticator.ts';
export * from './plans.ts';
