/**
 * Wraps the search button's labels. DocSearch names the button "Search (Control+k)" while it
 * shows "Search Ctrl K"; the accessible name must contain the visible text (WCAG 2.5.3, axe
 * label-content-name-mismatch), so the name spells the visible shortcut too.
 */
import SearchTranslations from '@theme-original/SearchTranslations';

const translations: typeof SearchTranslations = {
  ...SearchTranslations,
  button: { ...SearchTranslations.button, buttonAriaLabel: 'Search Ctrl K' },
};

export default translations;
