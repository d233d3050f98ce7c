import useDocusaurusContext from '@docusaurus/useDocusaurusContext';
import type { SiteLinks } from '../../site-links.ts';

export function useSiteLinks(): SiteLinks {
  return useDocusaurusContext().siteConfig.customFields?.links as SiteLinks;
}
