/**
 * The navbar search: DocSearch's button and our modal (see SearchModal.tsx for why not
 * DocSearch's), talking to the self-hosted search service. Not a wrapper of the theme's SearchBar:
 * that one always renders `<link rel="preconnect" href="https://{appId}-dsn.algolia.net">`, and no
 * request may leave for a third-party host, so this component replaces it.
 *
 * Keys: Ctrl/Cmd+K toggles the modal; '/' opens it when not typing in a field; Escape closes it,
 * and a second Escape clears the query. Personalization (recent and favorite searches, insights)
 * is off when `themeConfig.algolia.disableUserPersonalization` is set or the browser sends
 * Global Privacy Control.
 */
import { DocSearchButton } from '@docsearch/react/button';
import '@docsearch/css/dist/style.css';
import { useHistory } from '@docusaurus/router';
import { useSearchLinkCreator } from '@docusaurus/theme-common';
import {
  useAlgoliaContextualFacetFilters,
  useSearchResultUrlProcessor,
} from '@docusaurus/theme-search-algolia/client';
import useDocusaurusContext from '@docusaurus/useDocusaurusContext';
import type { SearchSettings } from '@imagegen/search/settings';
import translations from '@theme/SearchTranslations';
import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { useRuntimeSettings } from '../../client/runtime-settings.ts';
import { SearchModal } from './SearchModal.tsx';
import {
  createSearchClient,
  type InsightsEvent,
  type LiteClient,
  parseHosts,
  sendInsights,
} from './search-client.ts';
import { createStoredSearches } from './stored-searches.ts';
import './styles.css';

/** themeConfig.algolia (docusaurus.config.ts). */
interface SearchConfig extends SearchSettings {
  contextualSearch?: boolean;
  insights?: boolean;
  disableUserPersonalization?: boolean;
  missingResultsUrl?: string;
}

const USER_TOKEN_KEY = 'imagegen-search-user-token';

function isEditing(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null;
  if (!element) return false;
  const tag = element.tagName;
  return element.isContentEditable || tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA';
}

function userToken(): string {
  try {
    let token = localStorage.getItem(USER_TOKEN_KEY);
    if (!token) {
      token = `anonymous-${crypto.randomUUID()}`;
      localStorage.setItem(USER_TOKEN_KEY, token);
    }
    return token;
  } catch {
    return 'anonymous';
  }
}

export default function SearchBar(): ReactNode {
  const { siteConfig } = useDocusaurusContext();
  // The credentials, index and hosts of this run (the docs host's), over the build's DocSearch settings.
  const { search } = useRuntimeSettings();
  const config = useMemo(
    () => ({ ...(siteConfig.themeConfig.algolia as SearchConfig), ...search }),
    [siteConfig, search],
  );
  const history = useHistory();
  const createSearchLink = useSearchLinkCreator();
  // Hits carry absolute URLs of the configured site URL; this keeps their path (and base URL).
  const processUrl = useSearchResultUrlProcessor();
  const contextualFilters = useAlgoliaContextualFacetFilters() as unknown as string[][] | string[];
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState('');
  const [client, setClient] = useState<LiteClient | null>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const container = useRef<HTMLDivElement | null>(null);

  const hosts = useMemo(
    () => (typeof window === 'undefined' ? [] : parseHosts(config.hosts, window.location.origin)),
    [config.hosts],
  );
  const personalization = useMemo(
    () =>
      !config.disableUserPersonalization &&
      !(
        typeof navigator !== 'undefined' &&
        (navigator as { globalPrivacyControl?: boolean }).globalPrivacyControl
      ),
    [config.disableUserPersonalization],
  );
  const stored = useMemo(
    () =>
      createStoredSearches(
        typeof window === 'undefined' ? null : window.localStorage,
        config.indexName,
        personalization,
      ),
    [config.indexName, personalization],
  );
  const facetFilters = useMemo(
    () => (config.contextualSearch ? (contextualFilters as (string | string[])[]) : []),
    [config.contextualSearch, contextualFilters],
  );
  const insights = useMemo(() => {
    if (!config.insights || !personalization || hosts.length === 0) return null;
    return (events: Omit<InsightsEvent, 'index' | 'userToken'>[]) => {
      const token = userToken();
      void sendInsights(
        hosts,
        config,
        events.map((event) => ({ ...event, index: config.indexName, userToken: token })),
      );
    };
  }, [config, hosts, personalization]);

  const openModal = useCallback(() => {
    if (!container.current) {
      container.current = document.createElement('div');
      document.body.insertBefore(container.current, document.body.firstChild);
    }
    setClient((current) => current ?? createSearchClient(config.appId, config.apiKey, hosts));
    setOpen(true);
  }, [config.appId, config.apiKey, hosts]);
  const closeModal = useCallback(() => {
    setOpen(false);
    buttonRef.current?.focus();
  }, []);

  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if ((event.key === 'k' || event.key === 'K') && (event.metaKey || event.ctrlKey) && !event.altKey) {
        event.preventDefault();
        if (open) closeModal();
        else openModal();
      } else if (event.key === 'Escape') {
        if (open) {
          event.preventDefault();
          closeModal();
        } else if (query && !isEditing(event.target)) {
          setQuery('');
        }
      } else if (event.key === '/' && !open && !isEditing(event.target) && !event.ctrlKey && !event.metaKey) {
        event.preventDefault();
        openModal();
      }
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [open, query, openModal, closeModal]);

  const onOpen = useCallback(
    (url: string, where: 'self' | 'tab' | 'window') => {
      const target = new URL(processUrl(url), window.location.href);
      if (where === 'tab') {
        window.open(target.href, '_blank', 'noopener')?.focus();
        return;
      }
      if (where === 'window') {
        window.open(target.href, '_blank', 'noopener,popup');
        return;
      }
      closeModal();
      setQuery('');
      if (target.origin === window.location.origin)
        history.push(`${target.pathname}${target.search}${target.hash}`);
      else window.location.assign(target.href);
    },
    [closeModal, history, processUrl],
  );

  return (
    <>
      <DocSearchButton
        ref={buttonRef}
        onClick={openModal}
        translations={translations.button}
        aria-haspopup="dialog"
      />
      {open &&
        client &&
        container.current &&
        createPortal(
          <SearchModal
            client={client}
            indexName={config.indexName}
            query={query}
            onQueryChange={setQuery}
            onClose={closeModal}
            onOpen={onOpen}
            searchPageUrl={createSearchLink}
            missingResultsUrl={(q) =>
              `${config.missingResultsUrl ?? 'https://support.imagegen.example'}?${new URLSearchParams({
                subject: `Search: no results for "${q}"`,
              })}`
            }
            facetFilters={facetFilters}
            stored={stored}
            personalization={personalization}
            insights={insights}
          />,
          container.current,
        )}
    </>
  );
}
