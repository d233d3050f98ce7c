import { ENTERPRISE_PLANS, PLANS } from '@imagegen/contract';

/** The subscription plans, as the contract lists them; the EP plans are the enterprise ones. */
export { ENTERPRISE_PLANS, PLANS };

export type Plan = (typeof PLANS)[number];

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

export function isEnterprisePlan(plan: string): boolean {
  return (ENTERPRISE_PLANS as readonly string[]).includes(plan);
}
