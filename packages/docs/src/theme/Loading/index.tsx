/**
 * Replaces core's fallback `@theme/Loading` (the classic theme has none to wrap). The stock one
 * shows the lazy-load error and Retry as white text on a light red box, which fails contrast
 * checks; this one uses the theme's danger alert, announces the error to screen readers and keeps
 * what the site promises: the error text and a Retry button that loads the page again.
 */
import type { ReactNode } from 'react';

interface LoadingProps {
  readonly error?: unknown;
  readonly retry: () => void;
  readonly pastDelay: boolean;
}

export default function Loading({ error, retry, pastDelay }: LoadingProps): ReactNode {
  if (error) {
    return (
      <main className="container margin-vert--xl">
        <div className="alert alert--danger" role="alert">
          <p>{String(error)}</p>
          <button type="button" className="button button--danger" onClick={retry}>
            Retry
          </button>
        </div>
      </main>
    );
  }
  if (pastDelay) {
    return (
      <main className="container margin-vert--xl" aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  }
  return null;
}
