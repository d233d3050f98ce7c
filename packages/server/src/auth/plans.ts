/** The spec's plans (section 5). EP plans are the enterprise ones: they can route to servers. */
export const PLANS = [
  'FREE',
  'TRIAL',
  'BASIC',
  'STANDARD',
  'SUPERCHARGE',
  'EPTRIAL',
  'EPBASIC',
  'EPSTANDARD',
  'EPPREMIUM',
  'WEEKLY',
  'MONTHLY',
  'UNLIMITED',
] as const;

export type Plan = (typeof PLANS)[number];

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

export function isEnterprisePlan(plan: string): boolean {
  return plan.startsWith('EP');
}
