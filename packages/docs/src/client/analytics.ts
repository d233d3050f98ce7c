/**
 * Sends a page-view event to the API's analytics collector on the first load and on every route
 * change (a hash-only change is the same page). The body is JSON sent as text/plain so the
 * browser makes a simple CORS request without a preflight; `keepalive` lets it finish when the
 * user leaves the page.
 */

import type { ClientModule } from '@docusaurus/types';
import { runtimeSettings } from './runtime-settings.ts';

function pageViewEvent(path: string, referrer: string | null) {
  return { type: 'page_view', path, referrer, occurred_at: new Date().toISOString() };
}

const analytics: ClientModule = {
  onRouteDidUpdate({ location, previousLocation }) {
    const { apiUrl } = runtimeSettings();
    if (!apiUrl) return;
    if (
      previousLocation &&
      previousLocation.pathname === location.pathname &&
      previousLocation.search === location.search
    ) {
      return;
    }
    const referrer = previousLocation
      ? previousLocation.pathname + previousLocation.search
      : document.referrer || null;
    const body = JSON.stringify({ events: [pageViewEvent(location.pathname + location.search, referrer)] });
    fetch(`${apiUrl}/analytics/v1/events`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain;charset=UTF-8' },
      body,
      keepalive: true,
      mode: 'cors',
      credentials: 'omit',
    }).catch(() => {
      // Analytics must never disturb reading: a collector that is down is ignored.
    });
  },
};

export default analytics;
