/**
 * The reader's API key, kept in this browser's localStorage only. The playground hands it to the
 * client made for the site's API address (runtime settings `apiUrl`), which sends it in the
 * `API-Key` header of its requests to that address and nowhere else (output links are fetched
 * without it).
 */
import { useCallback, useState } from 'react';

export const API_KEY_STORAGE = 'imagegen.playground.apiKey';

/** The key the playground keeps in this browser, or '' (the /schema page starts from it too). */
export function storedApiKey(): string {
  try {
    return window.localStorage.getItem(API_KEY_STORAGE) ?? '';
  } catch {
    // Storage off (a private window's policy): the key lives as long as the page.
    return '';
  }
}

export function useStoredApiKey(): [string, (key: string) => void] {
  const [key, setKey] = useState(storedApiKey);
  const update = useCallback((next: string) => {
    setKey(next);
    try {
      if (next) window.localStorage.setItem(API_KEY_STORAGE, next);
      else window.localStorage.removeItem(API_KEY_STORAGE);
    } catch {
      // See storedApiKey().
    }
  }, []);
  return [key, update];
}
