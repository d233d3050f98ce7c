/**
 * Every external address the site links to, in one place. Each can be overridden at build time by
 * the environment variable named next to it, so a deployment points the site at its own API host,
 * sign-up page or support portal without touching pages or components. The API address and the
 * sign-up page are also run-time settings (runtime-settings.ts): the docs host of `npm start`
 * hands the pages its own.
 */
export interface SiteLinks {
  /** The API host: /schema reads `${apiUrl}/openapi.json`, analytics posts to it (the build's value). */
  apiUrl: string;
  apiSchema: string;
  signUp: string;
  canvasApp: string;
  enterprisePlan: string;
  pricing: string;
  terms: string;
  privacy: string;
  supportPortal: string;
  bookCall: string;
}

const DEFAULTS: SiteLinks = {
  apiUrl: 'http://localhost:8000',
  apiSchema: '/schema',
  // A self-hosted API has no sign-up page: a key comes from its first start or the admin CLI,
  // which this page tells. A deployment with its own sign-up page sets it (at run time too).
  signUp: '/Introduction/getting-started',
  canvasApp: 'https://canvas.imagegen.example',
  enterprisePlan: 'https://imagegen.example/enterprise',
  pricing: 'https://imagegen.example/pricing',
  terms: 'https://imagegen.example/terms',
  privacy: 'https://imagegen.example/privacy',
  supportPortal: 'https://support.imagegen.example',
  bookCall: 'https://imagegen.example/book-a-call',
};

const ENV_NAMES: Record<keyof SiteLinks, string> = {
  apiUrl: 'IMAGEGEN_DOCS_API_URL',
  apiSchema: 'IMAGEGEN_DOCS_API_SCHEMA_URL',
  signUp: 'IMAGEGEN_DOCS_SIGNUP_URL',
  canvasApp: 'IMAGEGEN_DOCS_CANVAS_URL',
  enterprisePlan: 'IMAGEGEN_DOCS_ENTERPRISE_URL',
  pricing: 'IMAGEGEN_DOCS_PRICING_URL',
  terms: 'IMAGEGEN_DOCS_TERMS_URL',
  privacy: 'IMAGEGEN_DOCS_PRIVACY_URL',
  supportPortal: 'IMAGEGEN_DOCS_SUPPORT_URL',
  bookCall: 'IMAGEGEN_DOCS_BOOK_CALL_URL',
};

export function siteLinks(env: Record<string, string | undefined> = process.env): SiteLinks {
  const links = { ...DEFAULTS };
  for (const key of Object.keys(DEFAULTS) as (keyof SiteLinks)[]) {
    const value = env[ENV_NAMES[key]]?.trim();
    if (value) links[key] = value.replace(/\/+$/, '') || value;
  }
  return links;
}

export const LINK_ENV_NAMES = ENV_NAMES;
