import { useColorMode } from '@docusaurus/theme-common';
import { ApiReferenceReact } from '@scalar/api-reference-react';
import '@scalar/api-reference-react/style.css';
import './scalar-fit.css';
import { type ReactNode, useEffect, useMemo, useRef } from 'react';
import { storedApiKey } from './playground/api-key.ts';

/** The API-Key scheme of the contract's OpenAPI document. */
const SECURITY_SCHEME = 'APIKeyHeader';
/**
 * Scalar's sample in its API key field (base64 of a joke), which reads as a key already filled in.
 * The field says what belongs there instead.
 */
const SCALAR_KEY_SAMPLE = 'QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT';
export const API_KEY_PLACEHOLDER = 'your API key';

/**
 * Scalar configured to look like part of this site: our product name, the site's colour mode (the
 * site's toggle is the only one), and none of the vendor's own panels (client app button,
 * developer tools, MCP and agent prompts). Its API-Key field starts with the key the playground
 * keeps in this browser, or empty.
 */
export default function ScalarReference({ url }: { url: string }): ReactNode {
  const { colorMode } = useColorMode();
  const configuration = useMemo(
    () => ({
      url,
      title: 'imagegen API',
      metaData: { title: 'API Schema | imagegen' },
      hideClientButton: true,
      showDeveloperTools: 'never' as const,
      showToolbar: 'never' as const,
      hideDarkModeToggle: true,
      forceDarkModeState: colorMode,
      darkMode: colorMode === 'dark',
      withDefaultFonts: false,
      mcp: { disabled: true },
      agent: { disabled: true },
      defaultHttpClient: { targetKey: 'shell' as const, clientKey: 'curl' as const },
      authentication: {
        preferredSecurityScheme: SECURITY_SCHEME,
        securitySchemes: { [SECURITY_SCHEME]: { value: storedApiKey() } },
      },
    }),
    [url, colorMode],
  );
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const root = container.current;
    if (!root) return undefined;
    const fix = () => {
      replaceKeySample(root);
      nameUnnamedControls(root);
      reachScrollingLists(root);
    };
    fix();
    const observer = new MutationObserver(fix);
    observer.observe(root, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, []);
  return (
    <div ref={container}>
      <ApiReferenceReact configuration={configuration as never} />
    </div>
  );
}

/** The API key field shows what belongs in it, not Scalar's sample value. */
function replaceKeySample(root: HTMLElement) {
  for (const input of Array.from(
    root.querySelectorAll<HTMLElement>(`[placeholder="${SCALAR_KEY_SAMPLE}"]`),
  )) {
    input.setAttribute('placeholder', API_KEY_PLACEHOLDER);
  }
  for (const input of Array.from(
    root.querySelectorAll<HTMLElement>(`[data-placeholder="${SCALAR_KEY_SAMPLE}"]`),
  )) {
    input.dataset.placeholder = API_KEY_PLACEHOLDER;
  }
}

/**
 * Scalar leaves a few controls without an accessible name (icon-only copy buttons, its
 * contenteditable combobox inputs), which screen readers announce as bare "button" or "combobox"
 * and axe reports as critical. Name them from what they show.
 */
function nameUnnamedControls(root: HTMLElement) {
  for (const input of Array.from(root.querySelectorAll<HTMLElement>('[role="combobox"][contenteditable]'))) {
    if (!input.hasAttribute('aria-label')) {
      input.setAttribute('aria-label', input.dataset.placeholder ?? 'Value');
    }
    if (!input.hasAttribute('aria-expanded')) input.setAttribute('aria-expanded', 'false');
  }
  for (const button of Array.from(root.querySelectorAll<HTMLButtonElement>('button:not([aria-label])'))) {
    // Copy buttons hold only an icon and a hidden "Copied" note.
    if (button.className.includes('copy')) button.setAttribute('aria-label', 'Copy code');
    else if (!button.textContent?.trim()) button.setAttribute('aria-label', 'Show more');
  }
}

/**
 * A tag's list of endpoints scrolls once it holds more than the card's height (each pipeline has
 * its submit, status, cancel and status stream paths), and a scrolling region must be reachable by
 * keyboard (axe: serious). Make each list focusable and named, as the site's own wide tables are;
 * it stays a list (a role would hide its items' list semantics).
 */
function reachScrollingLists(root: HTMLElement) {
  for (const list of Array.from(root.querySelectorAll<HTMLElement>('.endpoints:not([tabindex])'))) {
    list.tabIndex = 0;
    list.setAttribute('aria-label', 'Endpoints of this tag');
  }
}
