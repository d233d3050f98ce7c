/**
 * The search modal, in DocSearch's markup and classes (its stylesheet dresses it), with the
 * behaviour the site promises (recent and favourite searches, hits grouped by page, no-results
 * and error screens, keyboard use, the stalled state after 300 ms). Why not DocSearch's own modal: 4.7.0 cannot show
 * 'Unable to fetch results' (autocomplete-core resets the error status to idle in a `finally`),
 * writes its search suggestions as an object so 'Try searching for' never appears, has no
 * 'No recent searches' start screen, and ships a client hard-wired to algolia.net.
 */
import { type KeyboardEvent, type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { groupHits, type HitGroup, parentOf, pathText, type SearchHit, titleHtml } from './group-hits.ts';
import { modalQuery } from './modal-query.ts';
import type { InsightsEvent, LiteClient } from './search-client.ts';
import type { StoredHit, StoredSearches } from './stored-searches.ts';

export const MAX_QUERY_LENGTH = 64;
const STALL_THRESHOLD_MS = 300;
const SUGGESTIONS = 3;
const VIEW_DELAY_MS = 400;

export type SearchStatus = 'idle' | 'loading' | 'stalled' | 'error';

export interface SearchModalProps {
  client: LiteClient;
  indexName: string;
  query: string;
  onQueryChange(query: string): void;
  onClose(): void;
  /** Opens a hit: same tab (SPA navigation), a new tab, or a new window. */
  onOpen(url: string, where: 'self' | 'tab' | 'window'): void;
  searchPageUrl(query: string): string;
  missingResultsUrl(query: string): string;
  facetFilters: (string | string[])[];
  stored: StoredSearches;
  personalization: boolean;
  insights: ((events: Omit<InsightsEvent, 'index' | 'userToken'>[]) => void) | null;
}

interface Results {
  query: string;
  groups: HitGroup[];
  nbHits: number;
  queryID?: string;
}

interface Item {
  key: string;
  hit: SearchHit | StoredHit;
  /** Set for a search hit (not a stored search). */
  group?: HitGroup;
  position?: number;
  kind: 'hit' | 'recent' | 'favorite';
}

function snippetLength(): number {
  return typeof window !== 'undefined' && window.matchMedia('(max-width: 768px)').matches ? 5 : 10;
}

export function SearchModal(props: SearchModalProps): ReactNode {
  const { client, indexName, query, stored } = props;
  const [status, setStatus] = useState<SearchStatus>('idle');
  const [results, setResults] = useState<Results | null>(null);
  const [suggestions, setSuggestions] = useState<string[]>([]);
  const [active, setActive] = useState(0);
  const [storedVersion, setStoredVersion] = useState(0);
  const inputRef = useRef<HTMLInputElement>(null);
  const dropdownRef = useRef<HTMLDivElement>(null);
  const latest = useRef(0);

  useEffect(() => {
    inputRef.current?.focus();
    inputRef.current?.select();
    document.body.classList.add('DocSearch--active');
    return () => document.body.classList.remove('DocSearch--active');
  }, []);

  // One request per query; only the latest one's answer is shown.
  useEffect(() => {
    const id = ++latest.current;
    if (!query.trim()) {
      setStatus('idle');
      setResults(null);
      return;
    }
    setStatus('loading');
    const stall = setTimeout(() => {
      if (latest.current === id) setStatus('stalled');
    }, STALL_THRESHOLD_MS);
    const length = snippetLength();
    client
      .search<SearchHit>({
        requests: [
          modalQuery({
            indexName,
            query,
            snippetWords: length,
            clickAnalytics: props.insights !== null,
            facetFilters: props.facetFilters,
          }),
        ],
      })
      .then(
        (response) => {
          if (latest.current !== id) return;
          const result = response.results[0] as {
            hits: SearchHit[];
            nbHits?: number;
            queryID?: string;
          };
          const groups = groupHits(result.hits);
          setResults({ query, groups, nbHits: result.nbHits ?? result.hits.length, queryID: result.queryID });
          setActive(0);
          setStatus('idle');
          if (groups.length > 0) setSuggestions(groups.slice(0, SUGGESTIONS).map((g) => g.title));
        },
        () => {
          if (latest.current !== id) return;
          setResults(null);
          setStatus('error');
        },
      )
      .finally(() => clearTimeout(stall));
    return () => clearTimeout(stall);
  }, [client, indexName, query, props.facetFilters, props.insights]);

  // A view event for hits that stayed on screen 400 ms, not for every keystroke's results (as
  // Algolia's insights plugin for autocomplete does).
  const { insights } = props;
  useEffect(() => {
    if (!insights || !results || results.groups.length === 0) return;
    const timer = setTimeout(() => {
      insights([
        {
          eventType: 'view',
          eventName: 'Hits Viewed',
          objectIDs: results.groups.flatMap((group) => group.hits.map((hit) => hit.objectID)),
        },
      ]);
    }, VIEW_DELAY_MS);
    return () => clearTimeout(timer);
  }, [results, insights]);

  const startScreen = !query.trim();
  // biome-ignore lint/correctness/useExhaustiveDependencies: storedVersion re-reads the storage after a change.
  const storedItems = useMemo<Item[]>(() => {
    if (!startScreen) return [];
    return [
      ...stored.recent().map((hit) => ({ key: `recent-${hit.objectID}`, hit, kind: 'recent' as const })),
      ...stored
        .favorites()
        .map((hit) => ({ key: `favorite-${hit.objectID}`, hit, kind: 'favorite' as const })),
    ];
  }, [startScreen, stored, storedVersion]);
  const hitItems = useMemo<Item[]>(() => {
    if (!results || startScreen) return [];
    let position = 0;
    return results.groups.flatMap((group) =>
      group.hits.map((hit) => ({
        key: hit.objectID,
        hit,
        group,
        position: ++position,
        kind: 'hit' as const,
      })),
    );
  }, [results, startScreen]);
  const items = startScreen ? storedItems : hitItems;

  useEffect(() => {
    const node = dropdownRef.current?.querySelector(`[data-item-index="${active}"]`);
    (node as HTMLElement | null)?.scrollIntoView?.({ block: 'nearest' });
  }, [active]);

  const select = useCallback(
    (item: Item, where: 'self' | 'tab' | 'window') => {
      if (item.kind === 'hit' && item.group) {
        const hit = item.hit as SearchHit;
        stored.saveRecent(hit, parentOf(hit, item.group));
        if (props.insights && results?.queryID && item.position) {
          props.insights([
            {
              eventType: 'click',
              eventName: 'Hit Selected',
              queryID: results.queryID,
              objectIDs: [hit.objectID],
              positions: [item.position],
            },
          ]);
        }
      } else {
        stored.saveRecent(item.hit, null);
      }
      props.onOpen(item.hit.url, where);
    },
    [props, results, stored],
  );

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (items.length === 0) return;
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive((current) => (current + step + items.length) % items.length);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      const item = items[active];
      if (!item) return;
      const where = event.ctrlKey || event.metaKey ? 'tab' : event.shiftKey ? 'window' : 'self';
      select(item, where);
    }
  };

  const containerClass = [
    'DocSearch',
    'DocSearch-Container',
    status === 'stalled' && 'DocSearch-Container--Stalled',
    status === 'error' && 'DocSearch-Container--Errored',
  ]
    .filter(Boolean)
    .join(' ');

  const activeId = items[active] ? `docsearch-item-${active}` : undefined;

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: the backdrop closes the modal on click, as DocSearch's does.
    <div
      className={containerClass}
      data-status={status}
      role="presentation"
      onMouseDown={(event) => {
        if (event.target === event.currentTarget) props.onClose();
      }}
    >
      <div className="DocSearch-Modal" role="dialog" aria-modal="true" aria-label="Search the documentation">
        <header className="DocSearch-SearchBar">
          <form
            className="DocSearch-Form"
            onSubmit={(event) => event.preventDefault()}
            onReset={(event) => {
              event.preventDefault();
              props.onQueryChange('');
              inputRef.current?.focus();
            }}
          >
            <label className="DocSearch-MagnifierLabel" htmlFor="docsearch-input" id="docsearch-label">
              <SearchIcon />
              <span className="DocSearch-VisuallyHiddenForAccessibility">Search</span>
            </label>
            <div className="DocSearch-LoadingIndicator" aria-hidden={status !== 'stalled'}>
              <LoadingIcon />
            </div>
            <input
              ref={inputRef}
              id="docsearch-input"
              className="DocSearch-Input"
              type="search"
              placeholder="Search docs"
              aria-autocomplete="list"
              aria-controls="docsearch-list"
              aria-activedescendant={activeId}
              aria-busy={status === 'loading' || status === 'stalled'}
              autoComplete="off"
              autoCorrect="off"
              autoCapitalize="off"
              spellCheck={false}
              enterKeyHint="go"
              maxLength={MAX_QUERY_LENGTH}
              value={query}
              onChange={(event) => props.onQueryChange(event.target.value.slice(0, MAX_QUERY_LENGTH))}
              onKeyDown={onKeyDown}
            />
            <button
              type="reset"
              title="Clear the query"
              className="DocSearch-Reset"
              aria-label="Clear the query"
              hidden={!query}
            >
              <ResetIcon />
            </button>
          </form>
          <button type="button" className="DocSearch-Cancel" onClick={props.onClose}>
            Cancel
          </button>
        </header>
        <div className="DocSearch-Dropdown" ref={dropdownRef}>
          <div className="DocSearch-Dropdown-Container" id="docsearch-list">
            {status === 'error' ? (
              <div className="DocSearch-ErrorScreen">
                <div className="DocSearch-Screen-Icon">
                  <ErrorIcon />
                </div>
                <p className="DocSearch-Title">Unable to fetch results</p>
                <p className="DocSearch-Help">You might want to check your network connection.</p>
              </div>
            ) : startScreen ? (
              <StartScreen
                items={storedItems}
                active={active}
                personalization={props.personalization}
                onActive={setActive}
                onSelect={select}
                onFavorite={(hit) => {
                  stored.favorite(hit);
                  props.insights?.([
                    { eventType: 'conversion', eventName: 'Search Saved', objectIDs: [hit.objectID] },
                  ]);
                  setStoredVersion((v) => v + 1);
                }}
                onRemove={(item) => {
                  if (item.kind === 'recent') stored.removeRecent(item.hit);
                  else stored.removeFavorite(item.hit);
                  setStoredVersion((v) => v + 1);
                }}
              />
            ) : results && results.query === query && results.groups.length === 0 ? (
              <div className="DocSearch-NoResults">
                <div className="DocSearch-Screen-Icon">
                  <NoResultsIcon />
                </div>
                <p className="DocSearch-Title">
                  No results for "<strong>{query}</strong>"
                </p>
                {suggestions.length > 0 && (
                  <div className="DocSearch-NoResults-Prefill-List">
                    <p className="DocSearch-Help">Try searching for:</p>
                    <ul>
                      {suggestions.map((suggestion) => (
                        <li key={suggestion}>
                          <button
                            className="DocSearch-Prefill"
                            type="button"
                            onClick={() => {
                              props.onQueryChange(suggestion.toLowerCase().slice(0, MAX_QUERY_LENGTH));
                              inputRef.current?.focus();
                            }}
                          >
                            {suggestion}
                          </button>
                        </li>
                      ))}
                    </ul>
                  </div>
                )}
                <p className="DocSearch-Help">
                  Believe this query should return results?{' '}
                  <a href={props.missingResultsUrl(query)} target="_blank" rel="noopener noreferrer">
                    Let us know.
                  </a>
                </p>
              </div>
            ) : results ? (
              <div className="DocSearch-Dropdown-Results" data-query={results.query}>
                {results.groups.map((group) => (
                  <section className="DocSearch-Hits" key={group.page}>
                    <div className="DocSearch-Hit-source">{group.title}</div>
                    {/* biome-ignore lint/a11y/noNoninteractiveElementToInteractiveRole: DocSearch's listbox pattern; its stylesheet styles these lists */}
                    <ul role="listbox" aria-labelledby="docsearch-label">
                      {group.hits.map((hit) => {
                        const index = hitItems.findIndex((item) => item.key === hit.objectID);
                        return (
                          <HitRow
                            key={hit.objectID}
                            index={index}
                            selected={index === active}
                            url={hit.url}
                            type={hit.type}
                            title={titleHtml(hit)}
                            path={hit.type === 'lvl1' ? '' : pathText(hit)}
                            onActive={setActive}
                            onSelect={(where) => select(hitItems[index]!, where)}
                          />
                        );
                      })}
                    </ul>
                  </section>
                ))}
                <section className="DocSearch-HitsFooter">
                  <a href={props.searchPageUrl(query)} onClick={props.onClose}>
                    See all {results.nbHits} results
                  </a>
                </section>
              </div>
            ) : null}
          </div>
        </div>
        <footer className="DocSearch-Footer">
          <ul className="DocSearch-Commands">
            <li>
              <kbd className="DocSearch-Commands-Key">↵</kbd>
              <span className="DocSearch-Label">to select</span>
            </li>
            <li>
              <kbd className="DocSearch-Commands-Key">↓</kbd>
              <kbd className="DocSearch-Commands-Key">↑</kbd>
              <span className="DocSearch-Label">to navigate</span>
            </li>
            <li>
              <kbd className="DocSearch-Commands-Key">esc</kbd>
              <span className="DocSearch-Label">to close</span>
            </li>
          </ul>
        </footer>
      </div>
    </div>
  );
}

function StartScreen(props: {
  items: Item[];
  active: number;
  personalization: boolean;
  onActive(index: number): void;
  onSelect(item: Item, where: 'self' | 'tab' | 'window'): void;
  onFavorite(hit: StoredHit): void;
  onRemove(item: Item): void;
}): ReactNode {
  if (!props.personalization) return null;
  if (props.items.length === 0) {
    return (
      <div className="DocSearch-StartScreen">
        <p className="DocSearch-Help">No recent searches</p>
      </div>
    );
  }
  const section = (kind: 'recent' | 'favorite', title: string) => {
    const rows = props.items.map((item, index) => ({ item, index })).filter(({ item }) => item.kind === kind);
    if (rows.length === 0) return null;
    return (
      <section className="DocSearch-Hits" data-section={kind}>
        <div className="DocSearch-Hit-source">{title}</div>
        {/* biome-ignore lint/a11y/noNoninteractiveElementToInteractiveRole: DocSearch's listbox pattern; its stylesheet styles these lists */}
        <ul role="listbox" aria-labelledby="docsearch-label">
          {rows.map(({ item, index }) => (
            <HitRow
              key={item.key}
              index={index}
              selected={index === props.active}
              url={item.hit.url}
              type={kind}
              title={escapeTitle(item.hit)}
              path={pathText(item.hit as SearchHit)}
              onActive={props.onActive}
              onSelect={(where) => props.onSelect(item, where)}
              actions={
                kind === 'recent' ? (
                  <>
                    <ActionButton title="Save this search" onClick={() => props.onFavorite(item.hit)}>
                      <StarIcon />
                    </ActionButton>
                    <ActionButton
                      title="Remove this search from history"
                      onClick={() => props.onRemove(item)}
                    >
                      <ResetIcon />
                    </ActionButton>
                  </>
                ) : (
                  <ActionButton
                    title="Remove this search from favorites"
                    onClick={() => props.onRemove(item)}
                  >
                    <ResetIcon />
                  </ActionButton>
                )
              }
            />
          ))}
        </ul>
      </section>
    );
  };
  return (
    <div className="DocSearch-StartScreen-Results">
      {section('recent', 'Recent')}
      {section('favorite', 'Favorite')}
    </div>
  );
}

function escapeTitle(hit: StoredHit): string {
  const text = hit.type === 'content' ? (hit.content ?? '') : (hit.hierarchy[hit.type] ?? '');
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function HitRow(props: {
  index: number;
  selected: boolean;
  url: string;
  type: string;
  title: string;
  path: string;
  onActive(index: number): void;
  onSelect(where: 'self' | 'tab' | 'window'): void;
  actions?: ReactNode;
}): ReactNode {
  const href = (() => {
    try {
      const url = new URL(props.url);
      return `${url.pathname}${url.hash}`;
    } catch {
      return props.url;
    }
  })();
  return (
    // biome-ignore lint/a11y/useFocusableInteractive: focus stays in the input; options are reached by aria-activedescendant, as in DocSearch
    <li
      className="DocSearch-Hit"
      id={`docsearch-item-${props.index}`}
      data-item-index={props.index}
      data-hit-type={props.type}
      // biome-ignore lint/a11y/noNoninteractiveElementToInteractiveRole: DocSearch's listbox pattern
      role="option"
      aria-selected={props.selected}
      onMouseMove={() => {
        if (!props.selected) props.onActive(props.index);
      }}
    >
      <a
        href={href}
        onClick={(event) => {
          event.preventDefault();
          props.onSelect(event.ctrlKey || event.metaKey ? 'tab' : event.shiftKey ? 'window' : 'self');
        }}
      >
        <div className="DocSearch-Hit-Container">
          <div className="DocSearch-Hit-icon">
            {props.type === 'content' ? <ContentIcon /> : <PageIcon />}
          </div>
          <div className="DocSearch-Hit-content-wrapper">
            {/* The service escapes the text; only its highlight tags are markup. */}
            {/* biome-ignore lint/security/noDangerouslySetInnerHtml: escaped by the search service */}
            <span className="DocSearch-Hit-title" dangerouslySetInnerHTML={{ __html: props.title }} />
            {props.path && <span className="DocSearch-Hit-path">{props.path}</span>}
          </div>
          {props.actions}
          <div className="DocSearch-Hit-action">
            <SelectIcon />
          </div>
        </div>
      </a>
    </li>
  );
}

function ActionButton(props: { title: string; onClick(): void; children: ReactNode }): ReactNode {
  return (
    <div className="DocSearch-Hit-action">
      <button
        className="DocSearch-Hit-action-button"
        title={props.title}
        aria-label={props.title}
        type="button"
        onClick={(event) => {
          event.preventDefault();
          event.stopPropagation();
          props.onClick();
        }}
      >
        {props.children}
      </button>
    </div>
  );
}

const svg = { width: 20, height: 20, viewBox: '0 0 20 20' } as const;

/** A 20 px icon drawn as one rounded outline (DocSearch's hit and star icons). */
function OutlineIcon({ d }: { d: string }) {
  return (
    <svg aria-hidden="true" {...svg}>
      <path d={d} stroke="currentColor" fill="none" fillRule="evenodd" strokeLinejoin="round" />
    </svg>
  );
}

/** A 20 px icon drawn as one rounded line with round caps (DocSearch's search and reset icons). */
function LineIcon({ d, className }: { d: string; className?: string }) {
  return (
    <svg aria-hidden="true" {...svg} className={className}>
      <path
        d={d}
        stroke="currentColor"
        fill="none"
        fillRule="evenodd"
        strokeLinecap="round"
        strokeLinejoin="round"
      />
    </svg>
  );
}

function SearchIcon() {
  return (
    <LineIcon
      className="DocSearch-Search-Icon"
      d="M14.386 14.386l4.088 4.088-4.088-4.088c-2.989 2.989-7.835 2.989-10.824 0-2.989-2.989-2.989-7.835 0-10.824 2.989-2.989 7.835-2.989 10.824 0 2.989 2.989 2.989 7.835 0 10.824z"
    />
  );
}

function LoadingIcon() {
  return (
    <svg
      viewBox="0 0 38 38"
      stroke="currentColor"
      strokeOpacity=".5"
      width={20}
      height={20}
      aria-hidden="true"
    >
      <g fill="none" fillRule="evenodd">
        <g transform="translate(1 1)" strokeWidth="2">
          <circle strokeOpacity=".3" cx="18" cy="18" r="18" />
          <path d="M36 18c0-9.94-8.06-18-18-18">
            <animateTransform
              attributeName="transform"
              type="rotate"
              from="0 18 18"
              to="360 18 18"
              dur="1s"
              repeatCount="indefinite"
            />
          </path>
        </g>
      </g>
    </svg>
  );
}

function ResetIcon() {
  return <LineIcon d="M10 10l5.09-5.09L10 10l5.09 5.09L10 10zm0 0L4.91 4.91 10 10l-5.09 5.09L10 10z" />;
}

function StarIcon() {
  return <OutlineIcon d="M10 14.2L5 17l1-5.6-4-4 5.5-.7 2.5-5 2.5 5 5.6.8-4 4 .9 5.5z" />;
}

function SelectIcon() {
  return (
    <svg aria-hidden="true" className="DocSearch-Hit-Select-Icon" {...svg}>
      <g stroke="currentColor" fill="none" fillRule="evenodd" strokeLinecap="round" strokeLinejoin="round">
        <path d="M18 3v4c0 2-2 4-4 4H2" />
        <path d="M8 17l-6-6 6-6" />
      </g>
    </svg>
  );
}

function PageIcon() {
  return (
    <OutlineIcon d="M17 6v12c0 .52-.2 1-1 1H4c-.7 0-1-.33-1-1V2c0-.55.42-1 1-1h8l5 5zM14 8h-3.13c-.51 0-.87-.34-.87-.87V4" />
  );
}

function ContentIcon() {
  return <OutlineIcon d="M17 5H3h14zm0 5H3h14zm0 5H3h14z" />;
}

function ErrorIcon() {
  return (
    <ScreenIcon d="M19 4.8a16 16 0 00-2-1.2m-3.3-1.2A16 16 0 001.1 4.7M16.7 8a12 12 0 00-2.8-1.4M10 6a12 12 0 00-6.7 2M12.3 14.7a4 4 0 00-4.5 0M14.5 11.4A8 8 0 0010 10M3 16L18 2M10 18h0" />
  );
}

function NoResultsIcon() {
  return (
    <ScreenIcon d="M15.5 4.8c2 3 1.7 7-1 9.7h0l4.3 4.3-4.3-4.3a7.8 7.8 0 01-9.8 1m-2.2-2.2A7.8 7.8 0 0113.2 2.4M2 18L18 2" />
  );
}

/** The 40 px outline of the error and no-results screens. */
function ScreenIcon({ d }: { d: string }) {
  return (
    <svg
      width="40"
      height="40"
      viewBox="0 0 20 20"
      fill="none"
      fillRule="evenodd"
      stroke="currentColor"
      aria-hidden
    >
      <path d={d} />
    </svg>
  );
}
