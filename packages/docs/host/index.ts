/**
 * The docs host: serves the built site, mounts the search service (@imagegen/search) and writes
 * the run's settings into the pages. Plain TypeScript run by tsx, not part of the Docusaurus build.
 */

export type { RuntimeSettings } from '../runtime-settings.ts';
export { type DocsHost, type DocsHostHandler, type DocsHostOptions, startDocsHost } from './docs-host.ts';
export { DOCS_BUILD_DIR, type DocsSiteOptions, docsBuilt, startDocsSite } from './docs-site.ts';
