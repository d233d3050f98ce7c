/**
 * Recent and favorite searches in browser storage, keyed per index (DocSearch's keys, so a
 * visitor's history carries over): 7 recent searches, 4 when favorites exist; 10 favorites.
 * Saving a recent search as a favorite removes it from recent; a content hit is stored as its
 * parent page hit; nothing is saved when the parent is already a favorite, or at all when
 * personalization is disabled.
 */
export interface StoredHit {
  objectID: string;
  type: string;
  url: string;
  content?: string | null;
  hierarchy: Record<string, string | null>;
}

const RECENT_LIMIT = 7;
const RECENT_LIMIT_WITH_FAVORITES = 4;
const FAVORITE_LIMIT = 10;

export interface StoredSearches {
  recent(): StoredHit[];
  favorites(): StoredHit[];
  /** Records a selected hit (its parent for a content hit); false when nothing was saved. */
  saveRecent(hit: StoredHit, parent: StoredHit | null): boolean;
  removeRecent(hit: StoredHit): void;
  /** Moves a recent search to the favorites. */
  favorite(hit: StoredHit): void;
  removeFavorite(hit: StoredHit): void;
}

function recentKey(indexName: string): string {
  return `__DOCSEARCH_RECENT_SEARCHES__${indexName}`;
}
function favoriteKey(indexName: string): string {
  return `__DOCSEARCH_FAVORITE_SEARCHES__${indexName}`;
}

/** A page is one stored search however it was reached (its own hit or a content hit's parent). */
function identity(hit: StoredHit): string {
  if (hit.type !== 'lvl1') return hit.objectID;
  const hash = hit.url.indexOf('#');
  return `page:${hash < 0 ? hit.url : hit.url.slice(0, hash)}`;
}

export function createStoredSearches(
  storage: Pick<Storage, 'getItem' | 'setItem'> | null,
  indexName: string,
  personalization: boolean,
): StoredSearches {
  const read = (key: string): StoredHit[] => {
    try {
      const parsed = JSON.parse(storage?.getItem(key) ?? '[]') as unknown;
      return Array.isArray(parsed) ? (parsed as StoredHit[]) : [];
    } catch {
      return [];
    }
  };
  const write = (key: string, items: StoredHit[]) => {
    try {
      storage?.setItem(key, JSON.stringify(items));
    } catch {
      // Storage full or blocked: the searches still work, unsaved.
    }
  };
  const strip = (hit: StoredHit): StoredHit => ({
    objectID: hit.objectID,
    type: hit.type,
    url: hit.url,
    content: hit.content ?? null,
    hierarchy: hit.hierarchy,
  });
  const recentLimit = () =>
    read(favoriteKey(indexName)).length > 0 ? RECENT_LIMIT_WITH_FAVORITES : RECENT_LIMIT;
  const without = (items: StoredHit[], hit: StoredHit) =>
    items.filter((item) => item.objectID !== hit.objectID && identity(item) !== identity(hit));

  return {
    recent: () => (personalization ? read(recentKey(indexName)).slice(0, recentLimit()) : []),
    favorites: () => (personalization ? read(favoriteKey(indexName)).slice(0, FAVORITE_LIMIT) : []),
    saveRecent(hit, parent) {
      if (!personalization) return false;
      const search = hit.type === 'content' ? parent : hit;
      if (!search) return false;
      if (read(favoriteKey(indexName)).some((item) => identity(item) === identity(search))) return false;
      const items = [strip(search), ...without(read(recentKey(indexName)), search)];
      write(recentKey(indexName), items.slice(0, recentLimit()));
      return true;
    },
    removeRecent(hit) {
      write(recentKey(indexName), without(read(recentKey(indexName)), hit));
    },
    favorite(hit) {
      if (!personalization) return;
      const favorites = [strip(hit), ...without(read(favoriteKey(indexName)), hit)];
      write(favoriteKey(indexName), favorites.slice(0, FAVORITE_LIMIT));
      // With favorites, recent searches shrink to 4.
      write(recentKey(indexName), without(read(recentKey(indexName)), hit).slice(0, recentLimit()));
    },
    removeFavorite(hit) {
      write(favoriteKey(indexName), without(read(favoriteKey(indexName)), hit));
    },
  };
}
